package race_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/race"
	"github.com/routerhq/router/internal/racetest"
	"github.com/routerhq/router/internal/store"
)

// An Anthropic-compatible reasoning model (MiniMax-M2, DeepSeek's or Kimi's
// /anthropic endpoint, Claude with thinking) streams its reasoning as a
// "thinking" block first. A stream cut during it (or a hedge loser cancelled
// there) was billed for every reasoning token, but the adapter keeps no
// Partial of thinking deltas, so the attempt keeps message_start's
// provisional output_tokens of 1: its cost_usd and the job's lost_cost_usd
// (SPEC §18) leave out the reasoning. The OpenAI adapter counts a stream's
// reasoning in the same case (docs/chat.md: "the router's estimates of an
// attempt's usage count it as output (a stream cut midway …)").
func TestCutThinkingStreamIsCostedWithItsReasoning(t *testing.T) {
	thought := strings.Repeat("Let me consider each field of the ticket in turn and check it. ", 60) // ~3.8 KB
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		ev := func(typ, data string) { fmt.Fprintf(w, "event: %s\ndata: %s\n\n", typ, data) }
		ev("message_start", `{"type":"message_start","message":{"id":"msg_t","type":"message","role":"assistant","model":"MiniMax-M2","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":300,"output_tokens":1}}}`)
		ev("content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":"","signature":""}}`)
		for i := 0; i < len(thought); i += 200 {
			piece, _ := json.Marshal(thought[i:min(i+200, len(thought))])
			ev("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":`+string(piece)+`}}`)
		}
		// The body ends during the thinking block: a cut stream.
	}))
	t.Cleanup(srv.Close)
	b := racetest.New(t, racetest.Options{Route: race.Route{}, Providers: []racetest.Provider{
		{Name: "primary", Adapter: anthropicAdapter(t, srv.URL), Price: &providers.Price{InputPerMTok: 3, OutputPerMTok: 15}},
		{Name: "fallback", Respond: func(int, *providers.Request) providers.Step {
			return providers.Step{Output: racetest.ValidTriage, Usage: &providers.Usage{PromptTokens: 2000, CompletionTokens: 100, TotalTokens: 2100}}
		}},
	}})
	j := b.WaitSettled(t, b.Submit(t).ID)
	b.Stop()
	p := racetest.AttemptOn(j, "primary")
	if j.State != store.JobSucceeded || p == nil || p.State != store.AttemptFailed {
		t.Fatalf("job %s, attempts %+v: want the primary cut (failed) and the fallback's win", j.State, j.Attempts)
	}
	var u providers.Usage
	if err := json.Unmarshal(p.Usage, &u); err != nil {
		t.Fatalf("primary usage %s: %v", p.Usage, err)
	}
	// ~3.8 KB of reasoning is several hundred tokens with any tokenizer.
	if u.CompletionTokens < 100 {
		t.Fatalf("the cut attempt streamed %d bytes of reasoning and is costed at %d output tokens (usage %s, cost %s, job lost_cost %s)",
			len(thought), u.CompletionTokens, p.Usage, fmtCost(p.CostUSD), fmtCost(j.LostCostUSD))
	}
}
