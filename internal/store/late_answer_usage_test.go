package store_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/routerhq/router/internal/store"
)

// A valid answer, or a billed failure, that comes after its attempt was
// settled `lost` (an unknown attempt settled when another attempt won) or
// resolved `failed` is billed all the same: its usage is stored on the
// attempt (in place of none or of the router's estimate, never of usage a
// provider reported), so that the attempt's cost_usd and the job's
// cost_usd and lost_cost_usd count it, as router_cost_usd_total does; and
// Offered.UsageStored says whether it was, so that the race counts it in
// the metrics only then. Found by review (rcost).
func TestLateAnswerOnSettledAttemptKeepsItsUsage(t *testing.T) {
	b := setup(t)
	ctx := context.Background()
	price := &store.Price{InputPerMTok: 10, OutputPerMTok: 100}
	real := map[string]any{"prompt_tokens": 300, "completion_tokens": 20, "total_tokens": 320}
	other := map[string]any{"prompt_tokens": 999, "completion_tokens": 1, "total_tokens": 1000}
	est := map[string]any{"prompt_tokens": 200, "completion_tokens": 0, "total_tokens": 200, "estimated": true}
	want := float64(300*10+20*100) / 1e6
	unknown := store.AttemptOutcome{State: store.AttemptUnknown, Error: map[string]any{"kind": "lease_expired", "outcome_unknown": true}}

	check := func(name, jobID string, seq int) {
		t.Helper()
		got, err := b.st.GetJobAny(ctx, jobID)
		if err != nil {
			t.Fatal(err)
		}
		var a *store.Attempt
		for i := range got.Attempts {
			if got.Attempts[i].Seq == seq {
				a = &got.Attempts[i]
			}
		}
		if a == nil {
			t.Fatalf("%s: no attempt %d", name, seq)
		}
		if a.CostUSD == nil || *a.CostUSD != want || got.LostCostUSD == nil || *got.LostCostUSD < want {
			t.Errorf("%s: attempt %d (%s) usage %s cost %v, job lost_cost_usd %v; want the answer's cost %v counted",
				name, seq, a.State, a.Usage, a.CostUSD, got.LostCostUSD, want)
		}
	}
	// running creates a job whose first attempt is running, and its price.
	running := func(key string) (*store.Job, store.Attempt) {
		t.Helper()
		nj := newJob(t, "acme", "triage", key, `{}`)
		nj.LeaseOwner, nj.LeaseFor = "replica-a", time.Hour
		nj.First = &store.FirstAttempt{Provider: "p1", Role: store.RolePrimary, Price: price}
		j, _, err := b.st.CreateJob(ctx, nj)
		if err != nil {
			t.Fatal(err)
		}
		return j, j.Attempts[0]
	}
	offer := func(name string, j *store.Job, a store.Attempt, usage any, state string, stored bool) {
		t.Helper()
		off, err := b.st.OfferCompletion(ctx, store.Completion{JobID: j.ID, AttemptID: a.ID, ReadVersion: a.ReadVersion,
			Result: json.RawMessage(`{"ok":true}`), Usage: usage, LatencyMS: 5})
		if err != nil || off.Won || off.State != state || off.UsageStored != stored {
			t.Fatalf("%s: late offer: %+v %v; want discarded, the attempt %s, usage stored %v", name, off, err, state, stored)
		}
	}
	// lost settles a's unknown outcome as lost: a hedge wins.
	lost := func(j *store.Job, a store.Attempt, usage any) {
		t.Helper()
		hedge, err := b.st.CreateAttempt(ctx, store.NewAttempt{JobID: j.ID, Provider: "p2", Role: store.RoleHedge, LeaseOwner: "replica-a", Price: price})
		if err != nil {
			t.Fatal(err)
		}
		if err := b.st.MarkAttemptRunning(ctx, hedge.ID); err != nil {
			t.Fatal(err)
		}
		u := unknown
		u.Usage = usage
		if err := b.st.FinishAttempt(ctx, a.ID, u); err != nil {
			t.Fatal(err)
		}
		off, err := b.st.OfferCompletion(ctx, store.Completion{JobID: j.ID, AttemptID: hedge.ID, ReadVersion: hedge.ReadVersion,
			Result: json.RawMessage(`{"ok":true}`), Usage: real, LatencyMS: 5})
		if err != nil || !off.Won || !off.UsageStored {
			t.Fatalf("hedge offer: %+v %v", off, err)
		}
	}
	// failed resolves a's unknown outcome as failed.
	failed := func(j *store.Job, a store.Attempt) {
		t.Helper()
		if err := b.st.FinishAttempt(ctx, a.ID, unknown); err != nil {
			t.Fatal(err)
		}
		if _, err := b.st.ResolveAttempt(ctx, store.Resolution{Owner: "acme", JobID: j.ID, Seq: 1, Outcome: "failed", Note: "gave up"}); err != nil {
			t.Fatal(err)
		}
	}

	// 1. Unknown attempt settled lost when a hedge wins; then its answer
	// comes. A second answer does not replace the first's usage.
	j, a := running("late-usage-lost")
	lost(j, a, nil)
	offer("settled lost", j, a, real, store.AttemptLost, true)
	check("settled lost", j.ID, 1)
	offer("settled lost, again", j, a, other, store.AttemptLost, false)
	check("settled lost, again", j.ID, 1)

	// 2. The same, the attempt settled with the router's estimate: the
	// answer's reported usage replaces it.
	j, a = running("late-usage-lost-estimate")
	lost(j, a, est)
	offer("settled lost with an estimate", j, a, real, store.AttemptLost, true)
	check("settled lost with an estimate", j.ID, 1)

	// 3. Unknown attempt resolved failed by an operator; then its answer
	// comes, and then another: the first's usage stays.
	j, a = running("late-usage-failed")
	failed(j, a)
	offer("resolved failed", j, a, real, store.AttemptFailed, true)
	check("resolved failed", j.ID, 1)
	offer("resolved failed, again", j, a, other, store.AttemptFailed, false)
	check("resolved failed, again", j.ID, 1)

	// 4. A late billed failure (its run found the attempt settled, and its
	// resolution refused: RecordCancelledUsage) on a lost and on a failed
	// attempt: stored once.
	j, a = running("late-usage-billed-lost")
	lost(j, a, nil)
	if w, err := b.st.RecordCancelledUsage(ctx, a.ID, real); err != nil || !w {
		t.Fatalf("billed failure on a lost attempt: written %v, err %v; want written", w, err)
	}
	if w, err := b.st.RecordCancelledUsage(ctx, a.ID, other); err != nil || w {
		t.Fatalf("billed failure on a lost attempt, again: written %v, err %v; want the first figure kept", w, err)
	}
	check("billed failure, lost", j.ID, 1)
	j, a = running("late-usage-billed-failed")
	failed(j, a)
	if w, err := b.st.RecordCancelledUsage(ctx, a.ID, real); err != nil || !w {
		t.Fatalf("billed failure on a failed attempt: written %v, err %v; want written", w, err)
	}
	check("billed failure, failed", j.ID, 1)
}
