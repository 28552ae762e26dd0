package providers

import (
	"context"
	"net/http"
	"testing"
)

// A vLLM-style error chunk with code 400 that comes after chunks of the
// answer is, as streamedStatus says of a 400 after tokens, no verdict on the
// request: it must not stop the job as the caller's bad request, and it must
// classify like the same error in OpenRouter's {"error": {...}} form.
func TestOpenAIStreamObjectError400AfterChunks(t *testing.T) {
	forms := map[string]string{
		"object form": `{"object":"error","message":"Internal error during generation","type":"BadRequestError","param":null,"code":400}`,
		"error form":  `{"error":{"message":"Internal error during generation","type":"BadRequestError","code":400}}`,
	}
	got := map[string]Kind{}
	for name, ev := range forms {
		srv := newFakeServer(t, func(w http.ResponseWriter, r *http.Request) {
			startStream(w)
			sse(w, chunk("hello ", ""), chunk("wor", ""), ev)
		})
		_, err := newTestAdapter(t, srv.URL, func(c *OpenAIConfig) { c.Stream = true }).Complete(context.Background(), testRequest())
		e := mustError(t, err)
		got[name] = e.Kind
		if e.Action == ActionStop {
			t.Errorf("%s: %s/%s/%s: an error after the answer began stops the job as the caller's", name, e.Kind, e.Fault, e.Action)
		}
	}
	if got["object form"] != got["error form"] {
		t.Errorf("the same error classifies as %s in vLLM's form and %s in OpenRouter's", got["object form"], got["error form"])
	}
}

// Before any chunk of the answer, vLLM's error object with code 400 is still
// the request's (bad_request, the caller's), and after chunks a context-length
// refusal is still context_length (requestKind), in either form.
func TestOpenAIStreamObjectError400Verdicts(t *testing.T) {
	const badReq = `{"object":"error","message":"temperature must be in [0, 2]","type":"BadRequestError","param":null,"code":400}`
	const ctxLen = `{"object":"error","message":"This model's maximum context length is 4096 tokens. However, you requested 5000 tokens.","type":"BadRequestError","param":null,"code":400}`
	for _, c := range []struct {
		name   string
		events []string
		kind   Kind
	}{
		{"bad request first", []string{badReq}, KindBadRequest},
		{"context length after chunks", []string{chunk("hello ", ""), ctxLen}, KindContextLength},
	} {
		srv := newFakeServer(t, func(w http.ResponseWriter, r *http.Request) {
			startStream(w)
			sse(w, c.events...)
		})
		_, err := newTestAdapter(t, srv.URL, func(c *OpenAIConfig) { c.Stream = true }).Complete(context.Background(), testRequest())
		if e := mustError(t, err); e.Kind != c.kind {
			t.Errorf("%s: got %s/%s, want %s", c.name, e.Kind, e.Action, c.kind)
		}
	}
}
