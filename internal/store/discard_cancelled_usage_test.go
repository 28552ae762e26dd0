package store_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/routerhq/router/internal/store"
)

// A valid answer discarded because its job was cancelled while its request
// was out stores the provider's usage on the attempt the cancellation
// settled: in place of none, and in place of the router's estimate (its run
// was cut first), but never in place of usage a provider reported. The
// job's cost_usd and lost_cost_usd count it.
func TestDiscardedAnswerOfACancelledJobKeepsItsUsage(t *testing.T) {
	b := setup(t)
	ctx := context.Background()
	price := &store.Price{InputPerMTok: 10, OutputPerMTok: 100}
	real := map[string]any{"prompt_tokens": 300, "completion_tokens": 20, "total_tokens": 320}
	est := map[string]any{"prompt_tokens": 200, "completion_tokens": 0, "total_tokens": 200, "estimated": true}
	start := func(key string) (*store.Job, *store.Attempt) {
		t.Helper()
		j, _, err := b.st.CreateJob(ctx, newJob(t, "acme", "triage", key, `{}`))
		if err != nil {
			t.Fatal(err)
		}
		a, err := b.st.CreateAttempt(ctx, store.NewAttempt{JobID: j.ID, Provider: "p1", Role: store.RolePrimary, LeaseOwner: "test", Price: price})
		if err != nil {
			t.Fatal(err)
		}
		if err := b.st.MarkAttemptRunning(ctx, a.ID); err != nil {
			t.Fatal(err)
		}
		if err := b.st.CancelJob(ctx, "acme", j.ID); err != nil {
			t.Fatal(err)
		}
		return j, a
	}
	offer := func(j *store.Job, a *store.Attempt, usage any) {
		t.Helper()
		off, err := b.st.OfferCompletion(ctx, store.Completion{JobID: j.ID, AttemptID: a.ID, ReadVersion: a.ReadVersion,
			Result: json.RawMessage(`{"ok":true}`), Usage: usage, LatencyMS: 5})
		if err != nil || off.Won || off.State != store.AttemptCancelled {
			t.Fatalf("offer: %+v, %v; want discarded, the attempt cancelled", off, err)
		}
	}
	check := func(j *store.Job, prompt, completion int) {
		t.Helper()
		got, err := b.st.GetJob(ctx, "acme", j.ID)
		if err != nil {
			t.Fatal(err)
		}
		a := got.Attempts[0]
		var u struct {
			PromptTokens     int  `json:"prompt_tokens"`
			CompletionTokens int  `json:"completion_tokens"`
			Estimated        bool `json:"estimated"`
		}
		if len(a.Usage) == 0 || json.Unmarshal(a.Usage, &u) != nil || u.PromptTokens != prompt || u.CompletionTokens != completion || u.Estimated {
			t.Fatalf("attempt %s with usage %s; want %d prompt and %d completion tokens, reported", a.State, a.Usage, prompt, completion)
		}
		cost := float64(prompt*10+completion*100) / 1e6
		if a.CostUSD == nil || *a.CostUSD != cost || got.CostUSD == nil || *got.CostUSD != cost ||
			got.LostCostUSD == nil || *got.LostCostUSD != cost {
			t.Fatalf("attempt cost %v, job cost %v, lost cost %v; want %v", a.CostUSD, got.CostUSD, got.LostCostUSD, cost)
		}
	}

	// No usage yet: the answer's is stored; a second answer does not replace it.
	j, a := start("discard-usage-none")
	offer(j, a, real)
	check(j, 300, 20)
	offer(j, a, map[string]any{"prompt_tokens": 999, "completion_tokens": 1, "total_tokens": 1000})
	check(j, 300, 20)

	// The run's estimate first (RecordCancelledUsage): replaced by the answer's.
	j, a = start("discard-usage-estimate")
	if w, err := b.st.RecordCancelledUsage(ctx, a.ID, est); err != nil || !w {
		t.Fatalf("estimate: written %v, err %v", w, err)
	}
	offer(j, a, real)
	check(j, 300, 20)
	// An estimate never replaces reported usage.
	if w, err := b.st.RecordCancelledUsage(ctx, a.ID, est); err != nil || w {
		t.Fatalf("estimate after the answer: written %v, err %v; want nothing written", w, err)
	}
	check(j, 300, 20)
}
