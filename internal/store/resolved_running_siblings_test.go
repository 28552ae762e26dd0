package store_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/routerhq/router/internal/store"
)

// A `succeeded` resolution made while the job is still `running` settles only
// the job's unknown and starting siblings (settleSiblingsSQL); those still
// `running` (another replica's, or a stalled orchestration's) go on. Each
// way such a sibling can end leaves it settled as the job's end settles its
// attempts — never `unknown` on the succeeded job (where nothing would ever
// settle it: reconciliation reads only running and unknown jobs), never a
// second win: its lease expiring (recovery, on the database's clock) makes it
// `lost` with a race event; its run's own unknown end (a deadline, a
// shutdown) is stored `lost`; a late valid answer is `lost`, logged as a race
// event and discarded (SPEC §3, §6); a cut by the run's watchCancel is
// `cancelled`. The job, its result and its version do not change again.
func TestResolvedSucceededRunningSiblingsSettle(t *testing.T) {
	for _, how := range []string{"timeout", "lease_expired"} {
		t.Run(how, func(t *testing.T) {
			b := setup(t)
			ctx := context.Background()
			j, _, err := b.st.CreateJob(ctx, newJob(t, "acme", "triage", "resolved-running-"+how, `{}`))
			if err != nil {
				t.Fatal(err)
			}
			first := startAttempt(t, b, j.ID, "p1", store.RolePrimary)
			expired := startAttempt(t, b, j.ID, "p2", store.RoleHedge)
			cut := startAttempt(t, b, j.ID, "p3", store.RoleHedge)
			late := startAttempt(t, b, j.ID, "p4", store.RoleHedge)
			cancelled := startAttempt(t, b, j.ID, "p5", store.RoleHedge)

			// The first attempt's outcome becomes unknown while its siblings
			// are in flight: the job stays running.
			switch how {
			case "timeout":
				if err := b.st.FinishAttempt(ctx, first.ID, store.AttemptOutcome{State: store.AttemptUnknown,
					Error: map[string]any{"kind": "timeout", "outcome_unknown": true}}); err != nil {
					t.Fatal(err)
				}
			case "lease_expired":
				if _, err := b.db.Pool.Exec(ctx, `UPDATE attempts SET lease_expires_at = now() - interval '1 second' WHERE id = $1`,
					first.ID); err != nil {
					t.Fatal(err)
				}
				if _, err := b.st.ExpireAttemptLeases(ctx); err != nil {
					t.Fatal(err)
				}
			}
			if got, err := b.st.GetJobAny(ctx, j.ID); err != nil || got.State != store.JobRunning {
				t.Fatalf("job before the resolution: %v, err %v; want running (siblings in flight)", got.State, err)
			}
			if _, err := b.st.ResolveAttempt(ctx, store.Resolution{Owner: "acme", JobID: j.ID, Seq: first.Seq,
				Outcome: "succeeded", Result: json.RawMessage(`{"by":"operator"}`)}); err != nil {
				t.Fatal(err)
			}
			resolved, err := b.st.GetJobAny(ctx, j.ID)
			if err != nil {
				t.Fatal(err)
			}
			for _, a := range resolved.Attempts {
				if a.ID != first.ID && a.State != store.AttemptRunning {
					t.Fatalf("attempt %d %s right after the resolution, want still running (only unknown and starting siblings are settled)",
						a.Seq, a.State)
				}
			}

			// The replica running `expired` dies: recovery, on the database's
			// clock, settles it as the job's end would have.
			if _, err := b.db.Pool.Exec(ctx, `UPDATE attempts SET lease_expires_at = now() - interval '1 second' WHERE id = $1`,
				expired.ID); err != nil {
				t.Fatal(err)
			}
			ids, err := b.st.ExpireAttemptLeases(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if len(ids) != 0 {
				t.Fatalf("lease expiry reported jobs %v with a new unknown attempt, want none (the job had succeeded)", ids)
			}
			// `cut`'s run reaches its deadline with no byte: an unknown end.
			stored, err := b.st.FinishAttemptAs(ctx, cut.ID, store.AttemptOutcome{State: store.AttemptUnknown,
				Error: map[string]any{"kind": "timeout", "outcome_unknown": true}})
			if err != nil || stored != store.AttemptLost {
				t.Fatalf("unknown end after the resolution stored %q (err %v), want lost", stored, err)
			}
			// `late`'s valid answer arrives: not a second win.
			off, err := b.st.OfferCompletion(ctx, store.Completion{JobID: j.ID, AttemptID: late.ID, ReadVersion: late.ReadVersion,
				Result: json.RawMessage(`{"by":"provider"}`), Usage: map[string]int{"prompt_tokens": 3, "completion_tokens": 2}})
			if err != nil {
				t.Fatal(err)
			}
			if off.Won || off.State != store.AttemptLost {
				t.Fatalf("late answer: won=%v state=%q, want a lost, discarded answer", off.Won, off.State)
			}
			// `cancelled`'s run sees the job succeed (watchCancel) and cuts it.
			stored, err = b.st.FinishAttemptAs(ctx, cancelled.ID, store.AttemptOutcome{State: store.AttemptCancelled,
				Error: map[string]any{"kind": "cancelled", "message": "cancelled: another attempt won"}})
			if err != nil || stored != store.AttemptCancelled {
				t.Fatalf("loser's cut stored %q (err %v), want cancelled", stored, err)
			}

			got, err := b.st.GetJobAny(ctx, j.ID)
			if err != nil {
				t.Fatal(err)
			}
			if got.State != store.JobSucceeded || got.Version != resolved.Version || got.CompletedBy == nil ||
				*got.CompletedBy != first.ID || string(got.Result) != `{"by": "operator"}` {
				t.Fatalf("job %s v%d completed by %v result %s after its siblings ended, want succeeded v%d by %s with the resolution's result",
					got.State, got.Version, got.CompletedBy, got.Result, resolved.Version, first.ID)
			}
			want := map[string]string{first.ID: store.AttemptWon, expired.ID: store.AttemptLost, cut.ID: store.AttemptLost,
				late.ID: store.AttemptLost, cancelled.ID: store.AttemptCancelled}
			for _, a := range got.Attempts {
				if a.State != want[a.ID] {
					t.Errorf("attempt %d (%s) ended %s, want %s", a.Seq, a.Provider, a.State, want[a.ID])
				}
				if a.ID != first.ID && (a.FinishedAt == nil || a.LeaseOwner != nil) {
					t.Errorf("attempt %d (%s) finished %v, lease %v: want finished, lease released", a.Seq, a.Provider, a.FinishedAt, a.LeaseOwner)
				}
			}
			if n := count(t, b, `SELECT count(*) FROM attempts WHERE job_id = $1 AND state IN ('unknown', 'starting', 'running')`, j.ID); n != 0 {
				t.Fatalf("%d attempt(s) left unknown or in flight on the succeeded job, want none", n)
			}
			// Each lost sibling has its race event (the late answer's logged
			// and discarded); the cut one has none.
			for _, id := range []string{expired.ID, cut.ID, late.ID} {
				if n := count(t, b, `SELECT count(*) FROM race_events WHERE attempt_id = $1 AND kind = 'lost'`, id); n != 1 {
					t.Errorf("%d lost race event(s) for attempt %s, want 1", n, id)
				}
			}
			if n := count(t, b, `SELECT count(*) FROM race_events WHERE attempt_id = $1`, cancelled.ID); n != 0 {
				t.Errorf("%d race event(s) for the cut loser, want none", n)
			}
			// Nothing is left for an operator to resolve.
			if _, err := b.st.ResolveAttempt(ctx, store.Resolution{Owner: "acme", JobID: j.ID, Seq: cut.Seq,
				Outcome: "failed"}); err == nil {
				t.Fatal("a sibling of the resolved job could still be resolved, want it settled")
			}
		})
	}
}
