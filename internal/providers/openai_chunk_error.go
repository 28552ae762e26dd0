package providers

import (
	"bytes"
	"encoding/json"
	"errors"
	"strconv"
	"strings"

	openai "github.com/sashabaranov/go-openai"
)

// chunkError returns the error a stream chunk reports beside its choices, or
// nil. OpenRouter ends a stream cut by an upstream error with a chunk that
// carries a top-level "error" object ({"code": 502, "message": "Provider
// disconnected unexpectedly"}) and finish_reason "error"; go-openai decodes
// such a chunk as an ordinary one (it knows an error only as a line that
// starts with {"error":) and drops the object.
//
// Only a chunk whose bytes hold the string "error" (a key, or a value such as
// that finish_reason: a JSON string escapes the quotes of text that holds the
// word) is decoded again, so a stream's ordinary chunks cost nothing more. An
// "error" member that is not an object is reported by its text.
func chunkError(raw []byte) *openai.APIError {
	if !bytes.Contains(raw, []byte(`"error"`)) {
		return nil
	}
	var c struct {
		Error json.RawMessage `json:"error"`
		// vLLM (older versions and forks) sends an error inside a stream
		// as an object of its own: {"object":"error","message":"…",
		// "type":"BadRequestError","code":400}.
		Object  string          `json:"object"`
		Message string          `json:"message"`
		Type    string          `json:"type"`
		Code    json.RawMessage `json:"code"`
	}
	if json.Unmarshal(raw, &c) != nil {
		return nil // decodeChunk decoded it: not reached, and nothing to add
	}
	v := bytes.TrimSpace(c.Error)
	if len(v) == 0 || bytes.Equal(v, []byte("null")) {
		if c.Object == "error" {
			return objectError(c.Message, c.Type, c.Code)
		}
		return nil
	}
	var e openai.APIError
	if v[0] == '{' && json.Unmarshal(v, &e) == nil {
		if e.Message == "" {
			e.Message = "the provider reported an error in the stream"
		}
		return &e
	}
	var s string
	if json.Unmarshal(v, &s) != nil || s == "" {
		s = "the provider reported an error in the stream: " + string(v)
	}
	return &openai.APIError{Message: s}
}

// objectError is the error of a chunk that is itself an error object
// ("object": "error"), its code an HTTP status when it is a number.
func objectError(message, typ string, code json.RawMessage) *openai.APIError {
	e := &openai.APIError{Message: message, Type: typ}
	if e.Message == "" {
		e.Message = "the provider reported an error in the stream"
	}
	var status int
	if json.Unmarshal(code, &status) == nil && status >= 400 && status < 600 {
		e.HTTPStatusCode = status
	} else {
		var s string
		if json.Unmarshal(code, &s) == nil && s != "" {
			e.Code = s
		}
	}
	return e
}

// classifyAnswered is Classify for an error object reported in a 2xx answer
// (an error event of a stream, or the whole body), opening when nothing of
// the answer had come. An opening error object whose code is an HTTP error
// status, with no status of its own, is classified as that status would be:
// a gateway that sent 200 (and keep-alive comments) before its upstream
// answered reports the upstream's refusal so (OpenRouter's {"error":
// {"code": 400, …}}, LiteLLM's "code": "400"), the provider's verdict on
// the request — a 400 is not retried, a 401 is the router's credentials, a
// 404 the target's model —, as vLLM's {"object": "error", "code": 400} is
// (objectError). Its StatusCode stays 0: HTTP said 2xx. After the answer
// began a 4xx code is no verdict on the request (streamedStatus).
func classifyAnswered(provider string, err error, opening bool) *Error {
	var apiErr *openai.APIError
	if !opening || !errors.As(err, &apiErr) || apiErr.HTTPStatusCode != 0 {
		return Classify(provider, err)
	}
	n := codeStatus(rawCode(apiErr))
	if n == 0 {
		return Classify(provider, err)
	}
	c := *apiErr
	c.HTTPStatusCode = n
	e := Classify(provider, &c)
	e.StatusCode = 0
	e.Err = err
	return e
}

// rawCode is an APIError's own code as text (not its inner error's, which
// apiCode prefers).
func rawCode(e *openai.APIError) string {
	switch c := e.Code.(type) {
	case int:
		return strconv.Itoa(c)
	case string:
		return c
	}
	return ""
}

// codeStatus is the HTTP error status (400–599) an error's code names, 0
// when the code is no such number.
func codeStatus(code string) int {
	n, err := strconv.Atoi(strings.TrimSpace(code))
	if err != nil || n < 400 || n > 599 {
		return 0
	}
	return n
}
