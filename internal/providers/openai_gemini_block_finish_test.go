package providers

import (
	"context"
	"net/http"
	"strings"
	"testing"
)

// Gateways that pass Gemini's finish reasons through in its own spelling
// (router-for-me/CLIProxyAPI#433, Portkey-AI/gateway#1200) pass its blocking
// ones too: SAFETY, PROHIBITED_CONTENT, RECITATION, BLOCKLIST and SPII say
// the provider withheld the output, as OpenAI's content_filter does. They
// were failed as a broken-off answer (stream_cut / malformed_response with the
// word as code) and failed over like a cut stream; they are content_policy,
// as content_filter is, with the usage billed and the word in the message.
func TestGeminiBlockFinishIsContentFilter(t *testing.T) {
	want := Usage{PromptTokens: 12, CompletionTokens: 7, TotalTokens: 19}
	for _, said := range []string{"SAFETY", "PROHIBITED_CONTENT", "RECITATION", "BLOCKLIST", "SPII", "safety"} {
		check := func(t *testing.T, resp *Response, err error) {
			t.Helper()
			if resp != nil {
				t.Fatalf("finish_reason %q: withheld output came back as an answer: %+v", said, resp)
			}
			e := mustError(t, err)
			if e.Kind != KindContentPolicy || e.Code != "content_filter" {
				t.Fatalf("finish_reason %q: kind %s code %q (%s), want %s %q", said, e.Kind, e.Code, e.Message, KindContentPolicy, "content_filter")
			}
			if !strings.Contains(e.Message, said) {
				t.Fatalf("finish_reason %q: message %q does not name it", said, e.Message)
			}
			assertBilled(t, e, want, "c", "gemini-2.5-flash")
		}
		t.Run("unstreamed/"+said, func(t *testing.T) {
			srv := newFakeServer(t, func(w http.ResponseWriter, _ *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				w.Write([]byte(`{"id":"c","object":"chat.completion","created":1,"model":"gemini-2.5-flash","choices":[{"index":0,"message":{"role":"assistant","content":"partial"},"finish_reason":"` + said + `"}],"usage":` + billedUsageJSON + `}`))
			})
			resp, err := newTestAdapter(t, srv.URL, nil).Complete(context.Background(), testRequest())
			check(t, resp, err)
		})
		t.Run("streamed/"+said, func(t *testing.T) {
			srv := newFakeServer(t, func(w http.ResponseWriter, _ *http.Request) {
				startStream(w)
				sse(w,
					`{"id":"c","object":"chat.completion.chunk","created":1,"model":"gemini-2.5-flash","choices":[{"index":0,"delta":{"content":"partial"},"finish_reason":null}]}`,
					`{"id":"c","object":"chat.completion.chunk","created":1,"model":"gemini-2.5-flash","choices":[{"index":0,"delta":{},"finish_reason":"`+said+`"}]}`,
					`{"id":"c","object":"chat.completion.chunk","created":1,"model":"gemini-2.5-flash","choices":[],"usage":`+billedUsageJSON+`}`,
					"[DONE]")
			})
			resp, err := newTestAdapter(t, srv.URL, nil).CompleteStream(context.Background(), testRequest(), nil)
			check(t, resp, err)
		})
	}
}
