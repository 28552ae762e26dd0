package race_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/routerhq/router/internal/metrics"
	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/race"
	"github.com/routerhq/router/internal/racetest"
	"github.com/routerhq/router/internal/store"
)

// A streamed request the provider answered with HTTP 200 and then, in place
// of the answer, an error event (Anthropic's overloaded_error or api_error
// before message_start; an OpenAI-compatible `data: {"error": …}` line
// before any chunk) is a request the provider refused, as with an error
// status: it billed nothing. The race took it for an answer cut after the
// provider began (a response byte, no status, no usage) and gave the attempt
// an estimated prompt, so it had a cost_usd, the job a lost_cost_usd and
// router_cost_usd_total counted money never spent. Found by review.
func TestStreamErrorEventInPlaceOfTheAnswerCostsNothing(t *testing.T) {
	cases := []struct {
		name    string
		adapter func(t *testing.T, url string) providers.Provider
		answer  func(w http.ResponseWriter)
	}{
		{"anthropic overloaded_error", anthropicAdapter, anthropicError("overloaded_error", "Overloaded")},
		{"anthropic api_error", anthropicAdapter, anthropicError("api_error", "Internal server error")},
		{"openai-compatible error line", openAIAdapter, func(w http.ResponseWriter) {
			w.Header().Set("Content-Type", "text/event-stream")
			w.WriteHeader(http.StatusOK)
			fmt.Fprint(w, "data: {\"error\":{\"message\":\"The server is overloaded\",\"type\":\"server_error\",\"param\":null,\"code\":null}}\n\n")
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { c.answer(w) }))
			t.Cleanup(srv.Close)
			m := metrics.New(metrics.Options{NoProcessCollectors: true})
			b := racetest.New(t, racetest.Options{Route: race.Route{}, Observer: m, Providers: []racetest.Provider{
				{Name: "primary", Adapter: c.adapter(t, srv.URL), Price: &providers.Price{InputPerMTok: 3, OutputPerMTok: 15}},
				{Name: "fallback", Price: &providers.Price{InputPerMTok: 1, OutputPerMTok: 4},
					Respond: func(int, *providers.Request) providers.Step {
						return providers.Step{Output: racetest.ValidTriage, Usage: &providers.Usage{PromptTokens: 2000, CompletionTokens: 100, TotalTokens: 2100}}
					}},
			}})
			j := b.WaitSettled(t, b.Submit(t).ID)
			b.Stop() // every attempt's cost counted
			p, f := racetest.AttemptOn(j, "primary"), racetest.AttemptOn(j, "fallback")
			if j.State != store.JobSucceeded || p == nil || p.State != store.AttemptFailed || f == nil || f.State != store.AttemptWon {
				t.Fatalf("job %s, attempts %+v: want the primary failed and the fallback's win", j.State, j.Attempts)
			}
			if len(p.Usage) != 0 || p.CostUSD != nil {
				t.Fatalf("the refused attempt has usage %s and cost %v: want none (error %s)", p.Usage, p.CostUSD, p.Error)
			}
			const fallbackCost = (2000*1 + 100*4) / 1e6
			// The job has a cost (the fallback's), so its lost_cost_usd is 0,
			// not absent.
			if j.CostUSD == nil || !near(*j.CostUSD, fallbackCost) || j.LostCostUSD == nil || *j.LostCostUSD != 0 {
				t.Fatalf("job cost %s, lost cost %s: want %v and 0", fmtCost(j.CostUSD), fmtCost(j.LostCostUSD), fallbackCost)
			}
			if got := testutil.ToFloat64(m.CostCounter().WithLabelValues("acme", "primary", "primary-model")); got != 0 {
				t.Fatalf("router_cost_usd_total of the refused attempt = %v, want 0", got)
			}
		})
	}
}

func anthropicAdapter(t *testing.T, url string) providers.Provider {
	t.Helper()
	p, err := providers.NewAnthropic(providers.AnthropicConfig{Name: "primary", BaseURL: url, APIKey: "sk-ant", Model: "claude-test", Stream: true})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func openAIAdapter(t *testing.T, url string) providers.Provider {
	t.Helper()
	p, err := providers.NewOpenAI(providers.OpenAIConfig{Name: "primary", BaseURL: url + "/v1", APIKey: "sk-test", Model: "gpt-test", Stream: true})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// anthropicError answers as Anthropic does a streamed request it cannot
// serve after all: HTTP 200, then an error event, and the end.
func anthropicError(typ, msg string) func(w http.ResponseWriter) {
	return func(w http.ResponseWriter) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.Header().Set("request-id", "req_overloaded")
		w.WriteHeader(http.StatusOK)
		fmt.Fprintf(w, "event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":%q,\"message\":%q},\"request_id\":\"req_overloaded\"}\n\n", typ, msg)
	}
}

func fmtCost(c *float64) string {
	if c == nil {
		return "none"
	}
	return fmt.Sprint(*c)
}
