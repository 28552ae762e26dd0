package race_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/race"
	"github.com/routerhq/router/internal/racetest"
	"github.com/routerhq/router/internal/store"
)

// A gateway in front of the Messages API that answers HTTP 200 with
// Anthropic's error object in place of the message refused the request and
// billed nothing; the adapter took it as a message without stop_reason (a
// stream cut after 0 events, streamed), received and without usage, so the
// race estimated its prompt as billed: a cost_usd and lost_cost_usd for
// money never spent. As the OpenAI-compatible adapter's 200 error object
// (TestAnsweredErrorCostsNothing), it costs nothing. Found by review.
func TestAnthropicErrorObjectCostsNothing(t *testing.T) {
	for _, stream := range []bool{false, true} {
		t.Run(fmt.Sprintf("stream %v", stream), func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				fmt.Fprint(w, `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`)
			}))
			t.Cleanup(srv.Close)
			adapter, err := providers.NewAnthropic(providers.AnthropicConfig{Name: "primary", BaseURL: srv.URL, APIKey: "k", Model: "claude-test", Stream: stream})
			if err != nil {
				t.Fatal(err)
			}
			b := racetest.New(t, racetest.Options{Route: race.Route{}, Providers: []racetest.Provider{
				{Name: "primary", Adapter: adapter, Price: &providers.Price{InputPerMTok: 3, OutputPerMTok: 15}},
				{Name: "fallback", Price: &providers.Price{InputPerMTok: 1, OutputPerMTok: 4},
					Respond: func(int, *providers.Request) providers.Step {
						return providers.Step{Output: racetest.ValidTriage, Usage: &providers.Usage{PromptTokens: 2000, CompletionTokens: 100, TotalTokens: 2100}}
					}},
			}})
			j := b.WaitSettled(t, b.Submit(t).ID)
			b.Stop()
			if j.State != store.JobSucceeded {
				t.Fatalf("job %s", j.State)
			}
			for _, a := range j.Attempts {
				if a.Provider == "primary" && (len(a.Usage) != 0 || a.CostUSD != nil) {
					t.Errorf("the refused attempt %d has usage %s and cost %s: want none (error %s)", a.Seq, a.Usage, fmtCost(a.CostUSD), a.Error)
				}
			}
			if j.LostCostUSD != nil && *j.LostCostUSD != 0 {
				t.Errorf("job lost cost %s, want 0", fmtCost(j.LostCostUSD))
			}
		})
	}
}
