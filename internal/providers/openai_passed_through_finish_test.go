package providers

import (
	"context"
	"fmt"
	"net/http"
	"testing"
)

// Gateways in front of Gemini pass its native finish reasons through their
// OpenAI-compatible endpoint in Gemini's own spelling, upper case: "STOP"
// and "MAX_TOKENS" (router-for-me/CLIProxyAPI#433, QwenLM/qwen-code#9882,
// Portkey-AI/gateway#1200, higress-group/higress#2408). wholeFinishReason
// already maps the whole endings other servers name their own way
// ("eos_token", "end_turn", "model_length", "max_tokens"), but compares case
// sensitively, so a whole, billed answer ending "STOP" is refused as broken
// off (stream_cut / malformed_response, "does not say it is complete") and
// the job fails over and pays again, on every call through such a gateway.
// The answer should be reported as "stop" / "length", as the lower-case words
// are.
func TestUpperCaseGeminiFinishIsWhole(t *testing.T) {
	for _, tc := range []struct{ said, want string }{{"stop", "stop"}, {"STOP", "stop"}, {"MAX_TOKENS", "length"}} {
		t.Run("streamed/"+tc.said, func(t *testing.T) {
			srv := newFakeServer(t, func(w http.ResponseWriter, _ *http.Request) {
				startStream(w)
				sse(w, chunk("the whole", ""), chunk(" answer", ""), chunk("", tc.said), usageChunk)
				fmt.Fprint(w, "data: [DONE]\n\n")
			})
			resp, err := newTestAdapter(t, srv.URL, nil).CompleteStream(context.Background(), testRequest(), nil)
			if err != nil {
				t.Fatalf("finish_reason %q: the whole answer failed: %v", tc.said, err)
			}
			if resp.Content != "the whole answer" || resp.FinishReason != tc.want {
				t.Fatalf("finish_reason %q: got %q (%s), want the whole answer (%s)", tc.said, resp.Content, resp.FinishReason, tc.want)
			}
		})
		t.Run("unstreamed/"+tc.said, func(t *testing.T) {
			body := `{"id":"c","object":"chat.completion","created":1,"model":"gemini-2.5-flash",` +
				`"choices":[{"index":0,"message":{"role":"assistant","content":"the whole answer"},"finish_reason":"` + tc.said + `"}],` +
				`"usage":{"prompt_tokens":11,"completion_tokens":5,"total_tokens":16}}`
			srv := newFakeServer(t, func(w http.ResponseWriter, _ *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				fmt.Fprint(w, body)
			})
			resp, err := newTestAdapter(t, srv.URL, nil).Complete(context.Background(), testRequest())
			if err != nil {
				t.Fatalf("finish_reason %q: the whole answer failed: %v", tc.said, err)
			}
			if resp.Content != "the whole answer" || resp.FinishReason != tc.want {
				t.Fatalf("finish_reason %q: got %q (%s), want the whole answer (%s)", tc.said, resp.Content, resp.FinishReason, tc.want)
			}
		})
	}
}
