package api

import (
	"encoding/json"
	"net/http"
	"slices"
	"strings"

	rfcproblem "github.com/routerhq/router/internal/problem"
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
// whose errors take OpenAI's shape (docs/chat.md) rather than a problem's, a
// near miss of one (openAINearMiss), or a path of OpenAI's API the router
// does not serve (openAIUnserved): only an OpenAI SDK sends those, and it
// reads no other shape.
func OpenAIShaped(path string) bool {
	if _, ok := openAINearMiss(path); ok {
		return true
	}
	return path == "/v1/chat/completions" || path == "/v1/models" || strings.HasPrefix(path, "/v1/models/") || openAIUnserved(path)
}

// openAIUnservedResources are the first segments after /v1 of the OpenAI
// API's paths that openai-go (v3.98) sends and the router does not serve: an
// SDK whose base_url is the router's reaches them with the same client
// (client.Responses.New, client.Embeddings.New, ...). chat and models are
// the router's own (openAIUnserved).
var openAIUnservedResources = []string{
	"agents", "assistants", "audio", "batches", "chatkit", "completions", "containers", "content_provenance_checks",
	"conversations", "decisions", "embeddings", "evals", "files", "fine_tuning", "images", "live", "moderations",
	"organization", "realtime", "responses", "skills", "threads", "uploads", "vaults", "vector_stores", "videos",
	"webhook_endpoints", "webhook_event_types",
}

// openAIUnserved reports whether path is one of the OpenAI API's that the
// router does not serve: a resource of openAIUnservedResources, or a stored
// completion (/v1/chat/completions/{id}, client.Chat.Completions.Get, for
// the chatcmpl- ids the router hands out). The router's own paths (/v1/jobs)
// are none of them, and keep the problem shape.
func openAIUnserved(path string) bool {
	rest, ok := strings.CutPrefix(path, "/v1/")
	if !ok {
		return false
	}
	if strings.HasPrefix(rest, "chat/completions/") {
		return true
	}
	first, _, _ := strings.Cut(rest, "/")
	return slices.Contains(openAIUnservedResources, first)
}

// openAINearMiss reports whether path is what an OpenAI SDK asks for when
// its base_url does not end in /v1 (/chat/completions, /models, /models/ID)
// or ends in a slash (/v1/chat/completions/), and which endpoint it meant:
// the SDK appends its paths to base_url. A path the API routes (GET
// /v1/models/, GET /v1/models/ID/, taken as a model's name) is never a near
// miss: routing takes it first.
func openAINearMiss(path string) (endpoint string, ok bool) {
	rest, prefixed := strings.CutPrefix(path, "/v1")
	if !prefixed || rest == "" || rest[0] != '/' {
		rest, prefixed = path, false
	}
	trimmed := strings.TrimSuffix(rest, "/")
	switch {
	case trimmed == "/chat/completions":
		endpoint = "POST /v1/chat/completions"
	case trimmed == "/models":
		endpoint = "GET /v1/models"
	case strings.HasPrefix(trimmed, "/models/") && !prefixed:
		endpoint = "GET /v1" + trimmed
	default:
		return "", false
	}
	return endpoint, !prefixed || trimmed != rest
}

// nearMissDetail says what a near miss (openAINearMiss) of endpoint should
// have been.
func nearMissDetail(r *http.Request, endpoint string) string {
	fix := "an OpenAI SDK's base_url must end in /v1 (for example http://HOST:PORT/v1)"
	if strings.HasSuffix(r.URL.Path, "/") {
		fix = "an OpenAI SDK's base_url must end in /v1, with no slash after it"
	}
	return rfcproblem.Clip(r.Method) + " " + rfcproblem.Clip(r.URL.Path) + " is not an endpoint of this router: did you mean " + rfcproblem.Clip(endpoint) + "? " +
		strings.ToUpper(fix[:1]) + fix[1:] + "; see docs/chat.md"
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
