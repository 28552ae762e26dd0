package store_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/routerhq/router/internal/store"
)

// An attempt still in flight after its job ended (a loser a route keeps
// running, kept_losers) whose router then dies is not left `unknown` on the
// ended job, where nothing would ever settle it (reconciliation reads only
// running and unknown jobs): lease expiry settles it as the job's end settles
// its siblings — `lost`, with a race event, on a succeeded job, as the win
// does with an unknown sibling; `cancelled` on a cancelled or failed one. The
// job itself does not change.
func TestExpiredLeaseOnEndedJobSettlesTheAttempt(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		end  string // how the job ended
		want string // the expired attempt's state
	}{
		{store.JobSucceeded, store.AttemptLost},
		// No API path leaves an attempt in flight on a cancelled or failed
		// job (CancelJob cancels them, SettleJob fails a job only with none
		// in flight); the state is forced here to pin what expiry does if
		// one ever is.
		{store.JobCancelled, store.AttemptCancelled},
		{store.JobFailed, store.AttemptCancelled},
	} {
		t.Run(tc.end, func(t *testing.T) {
			b := setup(t)
			j, _, err := b.st.CreateJob(ctx, newJob(t, "acme", "triage", "ended", `{}`))
			if err != nil {
				t.Fatal(err)
			}
			loser := startAttempt(t, b, j.ID, "p1", store.RolePrimary)
			winner := startAttempt(t, b, j.ID, "p2", store.RoleHedge)
			if tc.end == store.JobSucceeded {
				won, err := b.st.Complete(ctx, store.Completion{JobID: j.ID, AttemptID: winner.ID, ReadVersion: winner.ReadVersion,
					Result: json.RawMessage(`{"ok":1}`)})
				if err != nil || !won {
					t.Fatalf("win: won=%v err=%v", won, err)
				}
			} else if _, err := b.db.Pool.Exec(ctx, `WITH a AS (UPDATE attempts SET state = 'failed' WHERE id = $2)
				UPDATE jobs SET state = $3, version = version + 1, lease_owner = NULL, lease_expires_at = NULL WHERE id = $1`,
				j.ID, winner.ID, tc.end); err != nil {
				t.Fatal(err)
			}
			before, err := b.st.GetJobAny(ctx, j.ID)
			if err != nil {
				t.Fatal(err)
			}
			// The loser's router dies.
			if _, err := b.db.Pool.Exec(ctx, `UPDATE attempts SET lease_expires_at = now() - interval '1 second' WHERE id = $1`, loser.ID); err != nil {
				t.Fatal(err)
			}
			if _, err := b.st.ExpireAttemptLeases(ctx); err != nil {
				t.Fatal(err)
			}
			after, err := b.st.GetJobAny(ctx, j.ID)
			if err != nil {
				t.Fatal(err)
			}
			var got store.Attempt
			for _, a := range after.Attempts {
				if a.ID == loser.ID {
					got = a
				}
			}
			if got.State != tc.want || got.FinishedAt == nil || got.LeaseOwner != nil {
				t.Fatalf("expired attempt %s (finished %v, lease %v) on a %s job, want %s", got.State, got.FinishedAt, got.LeaseOwner, tc.end, tc.want)
			}
			if after.State != before.State || after.Version != before.Version {
				t.Fatalf("job %s v%d after the expiry, want it left %s v%d", after.State, after.Version, before.State, before.Version)
			}
			wantEvents := 0
			if tc.want == store.AttemptLost {
				wantEvents = 1
			}
			if n := count(t, b, `SELECT count(*) FROM race_events WHERE attempt_id = $1 AND kind = 'lost'`, loser.ID); n != wantEvents {
				t.Fatalf("%d lost race events for the expired attempt, want %d", n, wantEvents)
			}
			if n := count(t, b, `SELECT count(*) FROM attempts WHERE state = 'unknown'`); n != 0 {
				t.Fatalf("%d unknown attempts left", n)
			}
		})
	}
}

// A loser that ends with an unknown outcome after its job succeeded (a kept
// loser cut by a timeout before any byte) is recorded `lost`, with a race
// event, not `unknown`: the job no longer depends on it.
func TestUnknownEndOfLoserAfterWinIsLost(t *testing.T) {
	b := setup(t)
	ctx := context.Background()
	j, _, err := b.st.CreateJob(ctx, newJob(t, "acme", "triage", "kept", `{}`))
	if err != nil {
		t.Fatal(err)
	}
	loser := startAttempt(t, b, j.ID, "p1", store.RolePrimary)
	winner := startAttempt(t, b, j.ID, "p2", store.RoleHedge)
	if won, err := b.st.Complete(ctx, store.Completion{JobID: j.ID, AttemptID: winner.ID, ReadVersion: winner.ReadVersion,
		Result: json.RawMessage(`{"ok":1}`)}); err != nil || !won {
		t.Fatalf("win: won=%v err=%v", won, err)
	}
	if err := b.st.FinishAttempt(ctx, loser.ID, store.AttemptOutcome{State: store.AttemptUnknown,
		Error: map[string]any{"kind": "timeout", "outcome_unknown": true}}); err != nil {
		t.Fatal(err)
	}
	if n := count(t, b, `SELECT count(*) FROM attempts WHERE id = $1 AND state = 'lost'`, loser.ID); n != 1 {
		t.Fatal("the loser's unknown end on a succeeded job was not recorded lost")
	}
	if n := count(t, b, `SELECT count(*) FROM race_events WHERE attempt_id = $1 AND kind = 'lost'`, loser.ID); n != 1 {
		t.Fatalf("%d lost race events for the loser, want 1", n)
	}
}
