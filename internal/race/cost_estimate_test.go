package race_test

import (
	"bytes"
	"encoding/json"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/routerhq/router/internal/metrics"
	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/race"
	"github.com/routerhq/router/internal/racetest"
	"github.com/routerhq/router/internal/store"
	"github.com/routerhq/router/internal/tokens"
)

// promptTokens is the router's count of a request's prompt, as a target
// whose model has no known tokenizer counts it (the scripted models): its
// messages and, for a json_schema format, the schema's compact text (sent
// with every call and billed as input).
func promptTokens(t *testing.T, req *providers.Request) int {
	t.Helper()
	msgs := slices.Clip(req.Messages)
	if f := req.ResponseFormat; f != nil && f.Type == "json_schema" {
		var b bytes.Buffer
		if err := json.Compact(&b, f.Schema); err != nil {
			t.Fatal(err)
		}
		msgs = append(msgs, providers.Message{Name: f.Name, Content: b.String()}) // the format's name is sent too
		if f.Description != "" {
			msgs = append(msgs, providers.Message{Content: f.Description})
		}
	}
	enc, err := tokens.EncodingForModel("", "primary-model")
	if err != nil {
		t.Fatal(err)
	}
	n, err := tokens.CountMessages(enc, msgs)
	if err != nil || n <= 0 {
		t.Fatalf("count: %d %v", n, err)
	}
	return n
}

// estimated reads an attempt's stored usage.
func estimated(t *testing.T, a *store.Attempt) providers.Usage {
	t.Helper()
	var u providers.Usage
	if err := json.Unmarshal(a.Usage, &u); err != nil {
		t.Fatalf("usage %s: %v", a.Usage, err)
	}
	return u
}

// A hedge loser cancelled in flight was sent: its provider bills the prompt
// whether or not the answer is read. Its usage is the router's count of the
// prompt, marked estimated, so that it has a cost_usd, the job's
// lost_cost_usd is the price of the hedge, and router_cost_usd_total counts it
// (it counted nothing for cancelled losers).
func TestCancelledHedgeLoserHasAnEstimatedCost(t *testing.T) {
	m := metrics.New(metrics.Options{NoProcessCollectors: true})
	var mu sync.Mutex
	var sent *providers.Request
	b := racetest.New(t, racetest.Options{Route: race.Route{HedgeAfter: time.Millisecond}, Observer: m, Providers: []racetest.Provider{
		{Name: "primary", Price: &providers.Price{InputPerMTok: 10, OutputPerMTok: 100}, Respond: racetest.Hang,
			OnCall: func(_ int, req *providers.Request) { mu.Lock(); sent = req; mu.Unlock() }},
		{Name: "fallback", Price: &providers.Price{InputPerMTok: 1, OutputPerMTok: 10},
			Respond: func(int, *providers.Request) providers.Step {
				return providers.Step{Output: racetest.ValidTriage, Usage: &providers.Usage{PromptTokens: 100, CompletionTokens: 10, TotalTokens: 110}}
			}},
	}})
	id := b.Submit(t).ID
	b.WaitSettled(t, id)
	b.Stop() // waits for the cancelled primary's end to be recorded
	j := b.Job(t, id)
	p := racetest.AttemptOn(j, "primary")
	if p.State != store.AttemptCancelled {
		t.Fatalf("primary %s, want cancelled (the hedge won)", p.State)
	}
	mu.Lock()
	want := promptTokens(t, sent)
	mu.Unlock()
	if u := estimated(t, p); u.PromptTokens != want || u.CompletionTokens != 0 || !u.Estimated {
		t.Fatalf("the loser's usage %s, want %d prompt tokens, estimated", p.Usage, want)
	}
	lost := float64(want*10) / 1e6
	if p.CostUSD == nil || !near(*p.CostUSD, lost) || j.LostCostUSD == nil || !near(*j.LostCostUSD, lost) {
		t.Fatalf("loser cost %v, job lost cost %v; want %v", p.CostUSD, j.LostCostUSD, lost)
	}
	if got := testutil.ToFloat64(m.CostCounter().WithLabelValues("acme", "primary", "primary-model")); !near(got, lost) {
		t.Fatalf("router_cost_usd_total of the loser = %v, want %v", got, lost)
	}
}

// An attempt cut before any response byte (unknown) was sent too: its usage
// is estimated the same way. An attempt that failed with the provider's own
// answer (an error status) is not: nothing is known to be billed.
func TestUnknownAttemptHasAnEstimatedUsageAndAFailedOneNone(t *testing.T) {
	b := setup(t, race.Route{MaxAttempts: 2},
		provSpec{name: "primary", respond: func(int, *providers.Request) providers.Step {
			return providers.Step{Status: 500}
		}},
		provSpec{name: "fallback", respond: hang, timeout: 50 * time.Millisecond})
	j := b.waitSettled(t, b.submit(t).ID)
	p, f := attemptBy(j, "primary"), attemptBy(j, "fallback")
	if p == nil || f == nil || p.State != store.AttemptFailed || f.State != store.AttemptUnknown {
		t.Fatalf("attempts %+v, want the primary failed and the fallback unknown", j.Attempts)
	}
	if len(p.Usage) != 0 && string(p.Usage) != "null" {
		t.Fatalf("the failed attempt has usage %s; want none", p.Usage)
	}
	if u := estimated(t, f); u.PromptTokens <= 0 || !u.Estimated {
		t.Fatalf("the unknown attempt's usage %s, want an estimated prompt count", f.Usage)
	}
}
