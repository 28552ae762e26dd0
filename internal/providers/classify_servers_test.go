package providers

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// The error bodies of OpenAI-compatible servers other than OpenAI's, as they
// send them, classified through the adapter over real HTTP, plain and
// streamed. Found by review:
//
//   - a body whose "error" is a string (TGI, LM Studio, proxies) makes
//     go-openai return a RequestError around an empty APIError, whose empty
//     message replaced the body: kind bad_request, message "Bad Request",
//     whatever the server said;
//   - llama.cpp's exceed_context_size_error (400, or 500 on older builds),
//     Gemini's "input token count … exceeds the maximum number of tokens
//     allowed" (a JSON array body) and TGI's "`inputs` tokens +
//     `max_new_tokens` must be <= N" (422) were bad_request or server_error:
//     the job stopped, or retried the same target, where context_length
//     fails over to a target with a larger window;
//   - OpenAI's code invalid_prompt (a prompt flagged by its policy) was a
//     plain bad_request.
func TestClassifyErrorBodiesOfCommonServers(t *testing.T) {
	const (
		llamaNew = `the request exceeds the available context size, try increasing it`
		llamaOld = `the request exceeds the available context size. try increasing the context size or enable context shift`
		gemini   = `The input token count (1048577) exceeds the maximum number of tokens allowed (1048576).`
		tgi      = "Input validation error: `inputs` tokens + `max_new_tokens` must be <= 4096. Given: 4000 `inputs` tokens and 200 `max_new_tokens`"
		lmstudio = `Trying to keep the first 5130 tokens when context the overflows. However, the model is loaded with context length of only 4096 tokens, which is not enough.`
	)
	for _, tc := range []struct {
		name    string
		status  int
		body    string
		kind    Kind
		message string // a part of the message kept ("": not checked)
	}{
		{"llama.cpp 400", 400, `{"error":{"code":400,"message":"` + llamaNew + `","type":"exceed_context_size_error","n_prompt_tokens":14429,"n_ctx":8192}}`, KindContextLength, "available context size"},
		{"llama.cpp 500", 500, `{"error":{"code":500,"message":"` + llamaOld + `","type":"exceed_context_size_error","n_prompt_tokens":1407,"n_ctx":256}}`, KindContextLength, "available context size"},
		{"llama.cpp type alone", 400, `{"error":{"code":400,"message":"too big","type":"exceed_context_size_error"}}`, KindContextLength, "too big"},
		{"gemini array", 400, `[{"error":{"code":400,"message":"` + gemini + `","status":"INVALID_ARGUMENT"}}]`, KindContextLength, "input token count"},
		{"tgi 422 string error", 422, fmt.Sprintf(`{"error":%q,"error_type":"validation"}`, tgi), KindContextLength, "max_new_tokens"},
		{"lm studio string error", 400, fmt.Sprintf(`{"error":%q}`, lmstudio), KindContextLength, "context length of only 4096"},
		{"string error, other", 400, `{"error":"temperature must be between 0 and 2"}`, KindBadRequest, "temperature must be between 0 and 2"},
		{"string error, 500", 500, `{"error":"CUDA out of memory"}`, KindServerError, "CUDA out of memory"},
		{"openai invalid_prompt", 400, apiErrorBody("Invalid prompt: your prompt was flagged as potentially violating our usage policy.", "invalid_request_error", nil, "invalid_prompt"), KindContentPolicy, "flagged"},
		{"plain 500 keeps server_error", 500, apiErrorBody("The server had an error while processing your request.", "server_error", nil, nil), KindServerError, "server had an error"},
	} {
		for _, stream := range []bool{false, true} {
			name := fmt.Sprintf("%s/stream=%v", tc.name, stream)
			srv := newFakeServer(t, func(w http.ResponseWriter, _ *http.Request) {
				writeError(w, tc.status, nil, tc.body)
			})
			p := newTestAdapter(t, srv.URL, func(c *OpenAIConfig) { c.Stream = stream })
			_, err := p.Complete(context.Background(), testRequest())
			e := mustError(t, err)
			if e.Kind != tc.kind || e.StatusCode != tc.status {
				t.Errorf("%s: kind %s status %d (%q), want %s", name, e.Kind, e.StatusCode, e.Message, tc.kind)
			}
			if !strings.Contains(e.Message, tc.message) {
				t.Errorf("%s: message %q, want the server's (%q)", name, e.Message, tc.message)
			}
		}
	}
}

// The same errors sent inside a 200 stream (llama.cpp reports a prompt past
// its context as an error event naming 400, or 500 on older builds, after
// the stream's headers), and directly to the classifier.
func TestClassifyContextLengthInStream(t *testing.T) {
	for _, tc := range []struct {
		name, event string
		kind        Kind
	}{
		{"llama.cpp 500", `{"error":{"code":500,"message":"the request exceeds the available context size. try increasing the context size or enable context shift","type":"exceed_context_size_error","n_prompt_tokens":1407,"n_ctx":256}}`, KindContextLength},
		{"llama.cpp 400", `{"error":{"code":400,"message":"the request exceeds the available context size, try increasing it","type":"exceed_context_size_error"}}`, KindContextLength},
		{"gemini wording", `{"error":{"code":400,"message":"The input token count (9) exceeds the maximum number of tokens allowed (8).","status":"INVALID_ARGUMENT"}}`, KindContextLength},
		{"invalid_prompt", `{"error":{"message":"Invalid prompt: flagged.","type":"invalid_request_error","code":"invalid_prompt"}}`, KindContentPolicy},
		{"a 500 stays a server error", `{"error":{"code":500,"message":"internal error","type":"server_error"}}`, KindServerError},
	} {
		srv := newFakeServer(t, func(w http.ResponseWriter, _ *http.Request) {
			startStream(w)
			sse(w, tc.event)
		})
		_, err := newTestAdapter(t, srv.URL, nil).CompleteStream(context.Background(), testRequest(), nil)
		if e := mustError(t, err); e.Kind != tc.kind {
			t.Errorf("%s: %s (%v), want %s", tc.name, e.Kind, e, tc.kind)
		}
	}
	// The classifier alone, for any adapter.
	for _, tc := range []struct {
		status         int
		code, typ, msg string
		kind           Kind
	}{
		{0, "500", "exceed_context_size_error", "x", KindContextLength},
		{500, "", "exceed_context_size_error", "x", KindContextLength},
		{502, "", "", "the request exceeds the available context size", KindContextLength},
		{503, "", "", "the request exceeds the available context size", KindUnavailable},
		{422, "", "", "Input validation error: `inputs` must have less than 2048 tokens. Given: 3000", KindContextLength},
		{400, "invalid_prompt", "invalid_request_error", "Invalid prompt", KindContentPolicy},
	} {
		if k := statusKind(tc.status, tc.code, tc.typ, tc.msg); k != tc.kind {
			t.Errorf("statusKind(%d, %q, %q, %q) = %s, want %s", tc.status, tc.code, tc.typ, tc.msg, k, tc.kind)
		}
	}
}

// A 5xx is context length only when its error says so outright (llama.cpp's
// exceed_context_size_error, "maximum context length"): a server failure
// whose message merely mentions a context window is a server error, retried.
// Found by review.
func TestServerErrorMentioningAContextWindowIsAServerError(t *testing.T) {
	for _, body := range []string{
		`{"error":{"message":"internal error: failed to allocate the context window buffer","type":"server_error"}}`,
		`{"error":{"message":"model worker crashed while extending context length","type":"server_error"}}`,
	} {
		srv := newFakeServer(t, func(w http.ResponseWriter, _ *http.Request) { writeError(w, 500, nil, body) })
		_, err := newTestAdapter(t, srv.URL, nil).Complete(context.Background(), testRequest())
		if e, _ := AsError(err); e == nil || e.Kind != KindServerError {
			t.Errorf("500 %s: %v; want server_error", body, err)
		}
	}
}

// The same in a stream's error event: a server_error event that mentions a
// context window is a server error, not context length. Found by review.
func TestStreamServerErrorMentioningAContextWindowIsAServerError(t *testing.T) {
	for _, ev := range []string{
		`{"error":{"message":"internal error: failed to allocate the context window buffer","type":"server_error"}}`,
		`{"error":{"message":"model worker crashed while extending context length","type":"server_error","code":null}}`,
	} {
		srv := newFakeServer(t, func(w http.ResponseWriter, _ *http.Request) { startStream(w); sse(w, ev) })
		_, err := newTestAdapter(t, srv.URL, func(c *OpenAIConfig) { c.Stream = true }).Complete(context.Background(), testRequest())
		if e, _ := AsError(err); e == nil || e.Kind != KindServerError {
			t.Errorf("stream error %s: %v; want server_error", ev, err)
		}
	}
}
