package providers

import (
	"bytes"
	"encoding/json"

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
