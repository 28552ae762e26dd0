package race_test

import (
	"encoding/json"
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

// An OpenAI-compatible stream that had begun answering (two content chunks)
// and then reports an error object carrying a numeric HTTP code (vLLM's
// {"object":"error",...,"code":500}) is an answer cut after the provider
// began: the prompt was processed and output generated. Its attempt carries
// the estimated usage of the prompt and the partial answer
// (docs/providers.md "Cost"), counted once in router_cost_usd_total. The
// race refused every error with a status, so it cost nothing. Found by
// review (rcost).
func TestMidStreamErrorWithStatusCodeIsEstimated(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		for _, c := range []string{`{\"category\":`, `\"billing\", \"urgency\": \"high\", \"summary\": \"a long summary of the customer's problem\"`} {
			fmt.Fprintf(w, "data: {\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"model\":\"gpt-test\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"%s\"},\"finish_reason\":null}]}\n\n", c)
		}
		fmt.Fprint(w, "data: {\"object\":\"error\",\"message\":\"engine crashed while generating\",\"type\":\"InternalServerError\",\"code\":500}\n\n")
	}))
	t.Cleanup(srv.Close)
	m := metrics.New(metrics.Options{NoProcessCollectors: true})
	b := racetest.New(t, racetest.Options{Route: race.Route{}, Observer: m, Providers: []racetest.Provider{
		{Name: "primary", Adapter: openAIAdapter(t, srv.URL), Price: &providers.Price{InputPerMTok: 3, OutputPerMTok: 15}},
		{Name: "fallback", Price: &providers.Price{InputPerMTok: 1, OutputPerMTok: 4},
			Respond: func(int, *providers.Request) providers.Step {
				return providers.Step{Output: racetest.ValidTriage, Usage: &providers.Usage{PromptTokens: 2000, CompletionTokens: 100, TotalTokens: 2100}}
			}},
	}})
	j := b.WaitSettled(t, b.Submit(t).ID)
	b.Stop() // every attempt's cost counted
	p := racetest.AttemptOn(j, "primary")
	if j.State != store.JobSucceeded || p == nil || p.State != store.AttemptFailed {
		t.Fatalf("job %s, attempts %+v", j.State, j.Attempts)
	}
	var u providers.Usage
	_ = json.Unmarshal(p.Usage, &u)
	if u.PromptTokens == 0 || u.CompletionTokens == 0 || !u.Estimated || p.CostUSD == nil {
		t.Fatalf("attempt cut mid-answer (error %s) has usage %s, cost %s: want the estimated prompt and partial answer", p.Error, p.Usage, fmtCost(p.CostUSD))
	}
	if got := testutil.ToFloat64(m.CostCounter().WithLabelValues("acme", "primary", "primary-model")); !near(got, *p.CostUSD) {
		t.Fatalf("router_cost_usd_total of the cut attempt = %v, want its cost_usd %v", got, *p.CostUSD)
	}
}
