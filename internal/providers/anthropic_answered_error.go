package providers

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"

	anthropic "github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"
)

// anthropicAnsweredError is the error of a 2xx answer whose body is
// Anthropic's error object and no message — {"type":"error","error":{"type":
// "rate_limit_error","message":…}}, or the "error" object alone — as a
// gateway in front of the Messages API may answer a refusal (a rate limit,
// an overload, a bad request) with HTTP 200; nil when body holds no such
// object. The SDK decoded it as a message without stop_reason (a stream
// without events, when streamed): a broken answer, received, counted
// against the breaker, never retried, and its prompt estimated as billed.
// As the OpenAI-compatible adapter's error object in a 200
// (openAIAnsweredError), it is classified by what it says, as an error event
// in the stream is, and marked AnsweredWithError: the provider refused the
// request, so the race estimates no usage for it (Received all the same:
// bytes came, the outcome is known). The envelope's own "type":"error" makes
// it one whatever its inner error says: an inner error without a type is
// classified by its message, as the SDK takes the same bytes sent as an
// error event (typeKind's fallback, server_error for an "Overloaded"); the
// "error" object alone, without the envelope, needs its type to be taken
// for one (an arbitrary {"error":…} is judged as the answer it is).
func anthropicAnsweredError(provider string, status int, body []byte) *Error {
	var obj struct {
		Type  string `json:"type"`
		Error *struct {
			Type    string `json:"type"`
			Message string `json:"message"`
			Details struct {
				ErrorCode string `json:"error_code"`
			} `json:"details"`
		} `json:"error"`
	}
	if json.Unmarshal(bytes.TrimSpace(body), &obj) != nil || (obj.Type != "error" && obj.Type != "") ||
		obj.Error == nil || (obj.Error.Type == "" && obj.Type != "error") {
		return nil
	}
	e := classifyAnthropicAPI(provider, 0, obj.Error.Type, obj.Error.Details.ErrorCode, obj.Error.Message, nil)
	e.Message = truncate(fmt.Sprintf("HTTP %d answered with an error object: %s", status, e.Message))
	e.Received = true
	e.AnsweredWithError = refusedInStream(e, true)
	return e
}

// answeredMessageError is anthropicAnsweredError for a non-streamed call's
// decoded message: only a message without stop_reason (which no whole
// message is) is looked at.
func answeredMessageError(provider string, trace *callTrace, msg *anthropic.Message) *Error {
	if msg == nil || msg.StopReason != "" {
		return nil
	}
	_, status, _ := trace.result()
	return anthropicAnsweredError(provider, status, []byte(msg.RawJSON())).withRequestID(trace.providerRequestID())
}

// answeredErrorObject carries through the SDK, to CompleteStream, the error
// of a streamed call answered with an error object (streamErrorObject).
type answeredErrorObject struct{ e *Error }

func (a *answeredErrorObject) Error() string { return a.e.Error() }
func (a *answeredErrorObject) Unwrap() error { return a.e }

// maxObjectLead bounds the white space looked past, at the start of a
// streamed call's answer, for the "{" of an error object.
const maxObjectLead = 512

// streamErrorObject is a streamed call's middleware: a 2xx answer whose body
// is a JSON object (an SSE stream never begins with "{", so a real stream is
// only peeked at) is read whole, whatever its Content-Type — a gateway may
// send a stream's headers before it knows what the upstream did, then
// Anthropic's error object as the body — up to max_response_bytes: past
// them the SDK reads them, then a *ResponseTooLargeError, and the call is
// response_too_large as any answer past the bound — and when it is
// Anthropic's error object the call fails with its error
// (anthropicAnsweredError, wrapped in answeredErrorObject); when it is a
// whole message (a proxy that ignores stream:true, wholeMessage), that
// message is handed to CompleteStream (answeredMessage). Any other answer is
// handed on as it came — the bytes read put back — and decoded as before,
// its events without an `event:` line named by their data's type
// (sseEventTypes).
func (p *Anthropic) streamErrorObject(req *http.Request, next option.MiddlewareNext) (*http.Response, error) {
	resp, err := next(req)
	if err != nil || resp == nil || resp.Body == nil || resp.StatusCode < 200 || resp.StatusCode > 299 {
		return resp, err
	}
	limit := p.cfg.MaxResponseBytes
	if limit <= 0 {
		limit = DefaultMaxResponseBytes
	}
	br := bufio.NewReader(resp.Body)
	body := readBack{Reader: br, Closer: resp.Body}
	if !startsObject(br) {
		// A stream (or an answer the SDK judges): its events named
		// when they came without an event line.
		body.Reader = newSSEEventTypes(br, limit)
		resp.Body = body
		return resp, nil
	}
	// Read at most max_response_bytes, and one byte more to tell a body
	// past them, as limitedBody does for every body: the transport's bound
	// is not relied on here (a body that never ends is not read whole).
	b, rerr := io.ReadAll(io.LimitReader(br, limit+1))
	if rerr == nil && int64(len(b)) > limit {
		b, rerr = b[:limit], &ResponseTooLargeError{Limit: limit}
	}
	if rerr == nil {
		if e := anthropicAnsweredError(p.cfg.Name, resp.StatusCode, b); e != nil {
			e.withRequestID(responseRequestID(resp.Header))
			_ = resp.Body.Close()
			return nil, &answeredErrorObject{e: e}
		}
		if msg, ok := wholeMessage(b); ok {
			// A proxy that ignored stream:true: the answer, whole
			// (CompleteStream judges it as an unstreamed one).
			_ = resp.Body.Close()
			return nil, &answeredMessage{msg: msg}
		}
	}
	// Not an error object, or its body broke off or passed the bound: the
	// SDK reads what came, then the read's error, as it would have.
	body.Reader = newSSEEventTypes(io.MultiReader(bytes.NewReader(b), errReader{rerr}), limit)
	resp.Body = body
	return resp, nil
}

// startsObject reports whether br's first byte past JSON white space is
// "{", without consuming anything.
func startsObject(br *bufio.Reader) bool {
	for n := 1; n <= maxObjectLead; n++ {
		b, _ := br.Peek(n)
		if len(b) < n {
			return false
		}
		switch b[n-1] {
		case ' ', '\t', '\r', '\n':
			continue
		case '{':
			return true
		}
		return false
	}
	return false
}

// readBack is a response body read from Reader (what was read ahead put
// back) and closed with Closer (the response's own body).
type readBack struct {
	io.Reader
	io.Closer
}

// errReader returns err (io.EOF when nil) from every read.
type errReader struct{ err error }

func (r errReader) Read([]byte) (int, error) {
	if r.err == nil {
		return 0, io.EOF
	}
	return 0, r.err
}
