package store_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/routerhq/router/internal/store"
)

// RecordCancelledUsage gives an attempt that the job's cancellation settled
// while its request was out the usage its own run reports, once: an attempt
// never sent (still starting when cancelled, or recorded not_sent), one that
// already has usage, and one of a job not cancelled are left alone.
func TestRecordCancelledUsageOnlyForSentAttemptsOfACancelledJob(t *testing.T) {
	b := setup(t)
	ctx := context.Background()
	est := map[string]any{"prompt_tokens": 200, "completion_tokens": 0, "total_tokens": 200, "estimated": true}
	prior := map[string]any{"prompt_tokens": 7, "completion_tokens": 0, "total_tokens": 7, "estimated": true}

	j, _, err := b.st.CreateJob(ctx, newJob(t, "acme", "triage", "cancelled-usage", `{}`))
	if err != nil {
		t.Fatal(err)
	}
	sent, err := b.st.CreateAttempt(ctx, store.NewAttempt{JobID: j.ID, Provider: "p1", Role: store.RolePrimary, LeaseOwner: "test",
		Price: &store.Price{InputPerMTok: 10, OutputPerMTok: 100}})
	if err != nil {
		t.Fatal(err)
	}
	if err := b.st.MarkAttemptRunning(ctx, sent.ID); err != nil {
		t.Fatal(err)
	}
	notSent := startAttempt(t, b, j.ID, "p3", store.RoleHedge)
	if err := b.st.RecordNotSent(ctx, notSent.ID, "the request was never sent"); err != nil {
		t.Fatal(err)
	}
	starting, err := b.st.CreateAttempt(ctx, store.NewAttempt{JobID: j.ID, Provider: "p2", Role: store.RoleHedge, LeaseOwner: "test"})
	if err != nil {
		t.Fatal(err)
	}
	// Another job, its attempt unknown with the usage its run recorded.
	u, _, err := b.st.CreateJob(ctx, newJob(t, "acme", "triage", "cancelled-usage-unknown", `{}`))
	if err != nil {
		t.Fatal(err)
	}
	unknown := startAttempt(t, b, u.ID, "p4", store.RolePrimary)
	if err := b.st.FinishAttempt(ctx, unknown.ID, store.AttemptOutcome{State: store.AttemptUnknown, Usage: prior}); err != nil {
		t.Fatal(err)
	}

	// A job still running: neither its attempt in flight nor one its run
	// recorded cancelled (with no usage) is the cancellation's.
	other, _, err := b.st.CreateJob(ctx, newJob(t, "acme", "triage", "cancelled-usage-running", `{}`))
	if err != nil {
		t.Fatal(err)
	}
	inFlight := startAttempt(t, b, other.ID, "p1", store.RolePrimary)
	if w, err := b.st.RecordCancelledUsage(ctx, inFlight.ID, est); err != nil || w {
		t.Fatalf("attempt in flight of a running job: written %v, err %v; want nothing written", w, err)
	}
	if err := b.st.FinishAttempt(ctx, inFlight.ID, store.AttemptOutcome{State: store.AttemptCancelled}); err != nil {
		t.Fatal(err)
	}
	if w, err := b.st.RecordCancelledUsage(ctx, inFlight.ID, est); err != nil || w {
		t.Fatalf("attempt cancelled on a running job: written %v, err %v; want nothing written", w, err)
	}

	for _, id := range []string{j.ID, u.ID} {
		if err := b.st.CancelJob(ctx, "acme", id); err != nil {
			t.Fatal(err)
		}
	}
	for _, a := range []*store.Attempt{starting, notSent, unknown} {
		if w, err := b.st.RecordCancelledUsage(ctx, a.ID, est); err != nil || w {
			t.Fatalf("attempt %d (%s): written %v, err %v; want nothing written", a.Seq, a.Provider, w, err)
		}
	}
	if w, err := b.st.RecordCancelledUsage(ctx, sent.ID, est); err != nil || !w {
		t.Fatalf("the sent attempt: written %v, err %v; want written", w, err)
	}
	again := map[string]any{"prompt_tokens": 999, "completion_tokens": 0, "total_tokens": 999, "estimated": true}
	if w, err := b.st.RecordCancelledUsage(ctx, sent.ID, again); err != nil || w {
		t.Fatalf("the sent attempt again: written %v, err %v; want the first figure kept", w, err)
	}

	got, err := b.st.GetJob(ctx, "acme", j.ID)
	if err != nil {
		t.Fatal(err)
	}
	prompt := func(a *store.Attempt) int {
		if len(a.Usage) == 0 || string(a.Usage) == "null" {
			return 0
		}
		var u struct {
			PromptTokens int `json:"prompt_tokens"`
		}
		if err := json.Unmarshal(a.Usage, &u); err != nil {
			t.Fatalf("usage %s: %v", a.Usage, err)
		}
		return u.PromptTokens
	}
	ended, err := b.st.GetJob(ctx, "acme", u.ID)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int{"p1": 200, "p2": 0, "p3": 0, "p4": 7}
	for _, a := range append(append([]store.Attempt(nil), got.Attempts...), ended.Attempts...) {
		if a.State != store.AttemptCancelled || prompt(&a) != want[a.Provider] {
			t.Errorf("attempt %s: %s with usage %s; want cancelled with %d prompt tokens", a.Provider, a.State, a.Usage, want[a.Provider])
		}
	}
	const cost = 200 * 10 / 1e6
	if got.CostUSD == nil || *got.CostUSD != cost || got.LostCostUSD == nil || *got.LostCostUSD != cost {
		t.Fatalf("job cost %v, lost cost %v; want %v (the sent attempt's estimate)", got.CostUSD, got.LostCostUSD, cost)
	}
}
