package api

import (
	"encoding/json"
	"net/http"
	"strings"
)

// openAIError is the error object OpenAI's API and SDKs use.
type openAIError struct {
	Message string  `json:"message"`
	Type    string  `json:"type"`
	Param   *string `json:"param"`
	Code    *string `json:"code"`
}

// writeOpenAIError answers in the OpenAI error shape.
func writeOpenAIError(w http.ResponseWriter, status int, typ, code, param, message string) {
	e := openAIError{Message: message, Type: typ}
	if code != "" {
		e.Code = &code
	}
	if param != "" {
		e.Param = &param
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]openAIError{"error": e})
}

// OpenAIShaped reports whether path is one of the OpenAI-compatible endpoints,
// whose errors take OpenAI's shape (docs/chat.md) rather than a problem's.
func OpenAIShaped(path string) bool {
	return path == "/v1/chat/completions" || path == "/v1/models" || strings.HasPrefix(path, "/v1/models/")
}

// WriteOpenAIError writes an invalid_request_error in OpenAI's shape, for
// middleware outside this package that answers before the API's handlers
// (the tenant listener's body reading, internal/server).
func WriteOpenAIError(w http.ResponseWriter, status int, code, message string) {
	writeOpenAIError(w, status, "invalid_request_error", code, "", message)
}

// openAIAuthFail reports an authentication failure in the OpenAI shape.
func openAIAuthFail(w http.ResponseWriter, _ *http.Request, status int, _ string, detail string) {
	typ, code := "invalid_request_error", "invalid_api_key"
	switch status {
	case http.StatusUnauthorized:
	case http.StatusTooManyRequests:
		typ, code = "requests", "rate_limit_exceeded"
	default:
		typ, code = "server_error", "unavailable"
	}
	writeOpenAIError(w, status, typ, code, "", detail)
}
