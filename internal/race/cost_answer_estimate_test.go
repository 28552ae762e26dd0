package race_test

import (
	"sync"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/routerhq/router/internal/metrics"
	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/racetest"
	"github.com/routerhq/router/internal/store"
	"github.com/routerhq/router/internal/tokens"
)

// A valid answer whose provider reported no usage (an OpenAI-compatible
// stream without its usage chunk: a server or gateway that ignores
// include_usage) was billed all the same. Its usage is the router's count of
// the prompt and of the answer, marked estimated, so the winner has a
// cost_usd, the job a cost, and router_cost_usd_total counts it — reported
// as zero, the job cost nothing.
func TestWinnerWithoutUsageHasAnEstimatedCost(t *testing.T) {
	m := metrics.New(metrics.Options{NoProcessCollectors: true})
	var mu sync.Mutex
	var sent *providers.Request
	b := racetest.New(t, racetest.Options{Observer: m, Providers: []racetest.Provider{
		{Name: "primary", Price: &providers.Price{InputPerMTok: 10, OutputPerMTok: 100},
			OnCall: func(_ int, req *providers.Request) { mu.Lock(); sent = req; mu.Unlock() },
			Respond: func(int, *providers.Request) providers.Step {
				return providers.Step{Output: racetest.ValidTriage, Usage: &providers.Usage{}}
			}},
	}})
	id := b.Submit(t).ID
	j := b.WaitSettled(t, id)
	if j.State != store.JobSucceeded {
		t.Fatalf("job %s, want succeeded", j.State)
	}
	p := racetest.AttemptOn(j, "primary")
	mu.Lock()
	in := promptTokens(t, sent)
	mu.Unlock()
	enc, err := tokens.EncodingForModel("", "primary-model")
	if err != nil {
		t.Fatal(err)
	}
	out, err := tokens.CountText(enc, racetest.ValidTriage)
	if err != nil || out <= 0 {
		t.Fatalf("count: %d %v", out, err)
	}
	u := estimated(t, p)
	if u.PromptTokens != in || u.CompletionTokens != out || u.TotalTokens != in+out || !u.Estimated {
		t.Fatalf("the winner's usage %s, want %d prompt and %d completion tokens, estimated", p.Usage, in, out)
	}
	cost := float64(in*10+out*100) / 1e6
	if p.CostUSD == nil || !near(*p.CostUSD, cost) || j.CostUSD == nil || !near(*j.CostUSD, cost) {
		t.Fatalf("winner cost %v, job cost %v; want %v", p.CostUSD, j.CostUSD, cost)
	}
	// The job is settled in the database before its attempt's end is
	// observed (the cost counted): Stop waits for the run to end.
	b.Stop()
	if got := testutil.ToFloat64(m.CostCounter().WithLabelValues("acme", "primary", "primary-model")); !near(got, cost) {
		t.Fatalf("router_cost_usd_total = %v, want %v", got, cost)
	}
}

// A provider's own usage is kept as it reported it, however small: only an
// answer with no count at all is estimated.
func TestReportedUsageIsNotEstimated(t *testing.T) {
	b := racetest.New(t, racetest.Options{Providers: []racetest.Provider{
		{Name: "primary", Respond: func(int, *providers.Request) providers.Step {
			return providers.Step{Output: racetest.ValidTriage, Usage: &providers.Usage{CompletionTokens: 1, TotalTokens: 1}}
		}},
	}})
	j := b.WaitSettled(t, b.Submit(t).ID)
	if u := estimated(t, racetest.AttemptOn(j, "primary")); u != (providers.Usage{CompletionTokens: 1, TotalTokens: 1}) {
		t.Fatalf("usage %+v, want the provider's own figures", u)
	}
}
