package providers

import (
	"bytes"
	"fmt"
	"io"
)

// answerTap keeps the body of a non-streamed call's 2xx answer as it is
// read (callTrace.answerBody): go-openai decodes it into a
// ChatCompletionResponse, which drops what the adapter still needs — the
// "error" object some servers answer a 200 with (openAIAnsweredError), and
// a usage it could not decode (lenientUsage). The body is bounded by the
// call's max_response_bytes, as every body is (the tap sits above
// limitedBody).
type answerTap struct {
	rc   io.ReadCloser
	body []byte
}

// maxAnswerPrealloc bounds what answerTap allocates ahead from a response's
// Content-Length: a server cannot make the router reserve more than this for
// bytes it does not send.
const maxAnswerPrealloc = 1 << 20

func (t *answerTap) Read(p []byte) (int, error) {
	n, err := t.rc.Read(p)
	t.body = append(t.body, p[:n]...)
	return n, err
}

func (t *answerTap) Close() error { return t.rc.Close() }

// answerBody is the body of a keepAnswer call's 2xx answer as far as it was
// read, or nil.
func (t *callTrace) answerBody() []byte {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.kept == nil {
		return nil
	}
	return t.kept.body
}

// openAIAnsweredError is the error of a 2xx answer whose body is an error
// object and no answer: {"error": {...}} with no choices (some servers and
// gateways send a refusal — a rate limit, a context length — with HTTP 200;
// go-openai drops its "error" and sees an answer without choices), or vLLM's
// {"object": "error", ...}; nil when body holds no error. Like an error
// event before any chunk of a 200 stream, it is classified by what it says
// (a code that is an HTTP status as that status, classifyAnswered) and
// marked AnsweredWithError: the provider refused the request, it did
// not cut an answer it had begun, so the race estimates no usage for it
// (Received all the same: bytes came, the outcome is known).
func openAIAnsweredError(provider string, status int, body []byte) *Error {
	apiErr := chunkError(bytes.TrimSpace(body))
	if apiErr == nil {
		return nil
	}
	e := classifyAnswered(provider, apiErr, true)
	e.Message = truncate(fmt.Sprintf("HTTP %d answered with an error object: %s", status, e.Message))
	e.Received = true
	e.AnsweredWithError = refusedInStream(e, true)
	return e
}
