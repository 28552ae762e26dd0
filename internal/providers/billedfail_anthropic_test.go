package providers

import (
	"context"
	"net/http"
	"testing"

	"github.com/routerhq/router/internal/providers/anthropicfake"
)

// A message the adapter fails although it is complete (a paused turn, a
// refusal) was billed: its error carries the message's usage, id and model,
// so that the attempt records its tokens and cost like an answer that breaks
// the contract. (Found in review: the pause_turn error had no usage, and the
// attempt no cost.)
func TestBilledFailAnthropicCarriesUsage(t *testing.T) {
	want := Usage{PromptTokens: 10, CompletionTokens: 5, TotalTokens: 15}
	for _, stop := range []string{"pause_turn", "refusal"} {
		reply := anthropicfake.Reply{Text: `{"category":"other"}`, StopReason: stop, Model: "claude-billed-1", InputTokens: 10, OutputTokens: 5}
		for _, stream := range []bool{false, true} {
			t.Run(map[bool]string{false: stop + "/message", true: stop + "/stream"}[stream], func(t *testing.T) {
				srv := anthropicfake.New(t, fixedReply(reply))
				p := newAnthropicAdapter(t, srv.URL, func(c *AnthropicConfig) { c.Stream = stream })
				resp, err := p.Complete(context.Background(), testRequest())
				if resp != nil {
					t.Fatalf("stop_reason %s returned a response: %+v", stop, resp)
				}
				e := mustError(t, err)
				if e.Code != stop {
					t.Fatalf("code %q, want %q (%v)", e.Code, stop, e)
				}
				assertBilled(t, e, want, "msg_fake1", "claude-billed-1")
			})
		}
	}
}

// A non-streamed message without a stop_reason cannot be used, but it came
// with its usage: that usage is kept too.
func TestBilledFailAnthropicNoStopReason(t *testing.T) {
	srv := newFakeServer(t, func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"id":"msg_nostop","type":"message","role":"assistant","model":"claude-billed-1",` +
			`"content":[{"type":"text","text":"hi"}],"stop_reason":null,"stop_sequence":null,` +
			`"usage":{"input_tokens":7,"output_tokens":2,"cache_creation_input_tokens":3,"cache_read_input_tokens":1}}`))
	})
	_, err := newAnthropicAdapter(t, srv.URL, nil).Complete(context.Background(), testRequest())
	e := assertKind(t, err, KindMalformedResponse, FaultProvider, ActionFailover, false)
	// Cache writes and reads are input the provider billed, as for an answer;
	// the cache reads are carried as cached_tokens.
	assertBilled(t, e, Usage{PromptTokens: 11, CompletionTokens: 2, TotalTokens: 13, PromptTokensDetails: PromptTokensDetails{CachedTokens: 1}}, "msg_nostop", "claude-billed-1")
}

// The id and model of an Anthropic message go to text columns (the answer's
// or, for a billed failure, the attempt's): NUL and invalid UTF-8 from the
// provider are replaced, as the OpenAI adapter does, instead of making the
// record fail.
func TestBilledFailAnthropicSanitizesIDAndModel(t *testing.T) {
	for _, stop := range []string{"end_turn", "pause_turn"} {
		srv := anthropicfake.New(t, fixedReply(anthropicfake.Reply{Text: "ok", StopReason: stop, Model: "claude\x00x", InputTokens: 1, OutputTokens: 1}))
		resp, err := newAnthropicAdapter(t, srv.URL, nil).Complete(context.Background(), testRequest())
		model := ""
		if resp != nil {
			model = resp.Model
		} else if e, ok := AsError(err); ok {
			model = e.ResponseModel
		}
		if model != "claude\uFFFDx" {
			t.Fatalf("%s: model %q (err %v), want the NUL replaced", stop, model, err)
		}
	}
}

// assertBilled checks that e carries a billed answer's usage, id and model.
func assertBilled(t *testing.T, e *Error, u Usage, id, model string) {
	t.Helper()
	if e.Usage == nil || *e.Usage != u {
		t.Fatalf("usage %+v, want %+v (%v)", e.Usage, u, e)
	}
	if e.ResponseID != id || e.ResponseModel != model {
		t.Fatalf("response id %q model %q, want %q %q", e.ResponseID, e.ResponseModel, id, model)
	}
}
