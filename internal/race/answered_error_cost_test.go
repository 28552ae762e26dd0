package race_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/routerhq/router/internal/metrics"
	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/race"
	"github.com/routerhq/router/internal/racetest"
	"github.com/routerhq/router/internal/store"
)

// An OpenAI-compatible provider that answers HTTP 200 with an error object
// in place of the answer ({"error": {...}}, no choices), streamed or not, or
// an error status whose body passes max_response_bytes, refused the request:
// it billed nothing. The adapter made the first an empty_response (or a
// stream cut) and the second a response_too_large, both received with no
// status, so the race estimated the attempt's prompt as billed: a cost_usd,
// a lost_cost_usd and router_cost_usd_total for money never spent. Found by
// review.
func TestAnsweredErrorCostsNothing(t *testing.T) {
	const errorObject = `{"error":{"message":"The server is overloaded","type":"server_error","param":null,"code":null}}`
	big := strings.Repeat("x", 10000)
	cases := []struct {
		name     string
		stream   bool
		maxBytes int64
		answer   func(w http.ResponseWriter)
	}{
		{"200 with an error object", false, 0, func(w http.ResponseWriter) {
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprint(w, errorObject)
		}},
		{"200 with an error object to a streamed call", true, 0, func(w http.ResponseWriter) {
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprint(w, errorObject)
		}},
		{"503 with an oversized error body", false, 4096, func(w http.ResponseWriter) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusServiceUnavailable)
			fmt.Fprintf(w, `{"error":{"message":%q,"type":"server_error"}}`, big)
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { c.answer(w) }))
			t.Cleanup(srv.Close)
			adapter, err := providers.NewOpenAI(providers.OpenAIConfig{Name: "primary", BaseURL: srv.URL + "/v1", APIKey: "sk-test",
				Model: "gpt-test", Stream: c.stream, MaxResponseBytes: c.maxBytes})
			if err != nil {
				t.Fatal(err)
			}
			m := metrics.New(metrics.Options{NoProcessCollectors: true})
			b := racetest.New(t, racetest.Options{Route: race.Route{}, Observer: m, Providers: []racetest.Provider{
				{Name: "primary", Adapter: adapter, Price: &providers.Price{InputPerMTok: 3, OutputPerMTok: 15}},
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
			if j.LostCostUSD == nil || *j.LostCostUSD != 0 {
				t.Fatalf("job lost cost %s, want 0", fmtCost(j.LostCostUSD))
			}
			if got := testutil.ToFloat64(m.CostCounter().WithLabelValues("acme", "primary", "primary-model")); got != 0 {
				t.Fatalf("router_cost_usd_total of the refused attempt = %v, want 0", got)
			}
		})
	}
}
