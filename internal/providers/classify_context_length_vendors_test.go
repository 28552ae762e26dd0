package providers

import (
	"context"
	"fmt"
	"net/http"
	"testing"
)

// vLLM (V1 engine) and xAI word a prompt past the model's context their own
// way; both were a bad request that stopped the job where a target with a
// larger window could take it.
func TestContextLengthVLLMDecoderPromptAndXAI(t *testing.T) {
	const msg = "The decoder prompt (length 5000) is longer than the maximum model length of 4096. Make sure that `max_model_len` is no smaller than the number of text tokens."
	for _, tc := range []struct {
		name   string
		status int
		body   string
	}{
		{"vllm error object", 400, fmt.Sprintf(`{"object":"error","message":%q,"type":"BadRequestError","param":null,"code":400}`, msg)},
		{"vllm wrapped", 400, fmt.Sprintf(`{"error":{"message":%q,"type":"BadRequestError","param":null,"code":400}}`, msg)},
		{"older vllm 500", 500, fmt.Sprintf(`{"object":"error","message":%q,"type":"InternalServerError","param":null,"code":500}`, msg)},
		{"xai", 400, `{"code":"Client specified an invalid argument","error":"This model's maximum prompt length is 131072 but the request contains 136973 tokens."}`},
	} {
		for _, stream := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/stream=%v", tc.name, stream), func(t *testing.T) {
				srv := newFakeServer(t, func(w http.ResponseWriter, _ *http.Request) { writeError(w, tc.status, nil, tc.body) })
				p := newTestAdapter(t, srv.URL, func(c *OpenAIConfig) { c.Stream = stream })
				_, err := p.Complete(context.Background(), testRequest())
				e := mustError(t, err)
				if e.Kind != KindContextLength || e.Action != ActionFailover {
					t.Fatalf("got kind %s action %s, want context_length_exceeded failover: %s", e.Kind, e.Action, e.Message)
				}
			})
		}
	}
}
