package store_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/routerhq/router/internal/store"
)

// transitionHangGuard bounds the calls of these tests that used to wait for
// a held job row without limit: a guard against a hung test, not a timing
// assertion (the calls return after their lock wait, a couple of seconds).
const transitionHangGuard = time.Minute

// whileHeld runs call while the backend pid holds a row it needs, and
// returns its error once it has returned, after having waited for the row.
func (b *bundle) whileHeld(t *testing.T, pid int, what string, call func(context.Context) error) error {
	t.Helper()
	got := make(chan error, 1)
	go func() { got <- call(context.Background()) }()
	b.awaitBlockedBy(t, pid)
	select {
	case err := <-got:
		return err
	case <-time.After(transitionHangGuard):
		t.Fatalf("%s still waited for the held job row after %s", what, transitionHangGuard)
		return nil
	}
}

// wantJobBusy fails unless err is a *BusyError (ErrBusy) naming job jobID.
func wantJobBusy(t *testing.T, what string, err error, jobID string) {
	t.Helper()
	var busy *store.BusyError
	if !errors.As(err, &busy) || !errors.Is(err, store.ErrBusy) || !store.Busy(err) || !strings.Contains(err.Error(), jobID) {
		t.Fatalf("%s with the job row held: err %v; want a BusyError naming job %s", what, err, jobID)
	}
}

// A valid answer that comes after its job was won is recorded (as lost)
// under the job row's lock; with that row held by another transaction (an
// operator's open psql transaction, a replica cut off mid-transaction) it
// gives up with ErrBusy after a bounded wait, and its attempt stays in flight
// for its lease's expiry to settle, as after any failed win. Before, the late
// path locked the row with no lock_timeout on a context that cannot be
// cancelled: the attempt's goroutine waited as long as the row was held
// (found in review).
func TestLateAnswerGivesUpOnAHeldJob(t *testing.T) {
	b := setup(t)
	ctx := context.Background()
	j, first := b.running(t, "late-held")
	hedge := startAttempt(t, b, j.ID, "p2", store.RoleHedge)
	if won, err := b.st.Complete(ctx, win(j, first)); err != nil || !won {
		t.Fatalf("first answer: won %v, err %v", won, err)
	}
	holder, pid := b.hold(t, `UPDATE jobs SET error = error WHERE id = $1`, j.ID)

	err := b.whileHeld(t, pid, "the late answer", func(ctx context.Context) error {
		won, err := b.st.Complete(ctx, win(j, hedge))
		if won {
			return errors.New("the late answer won")
		}
		return err
	})
	wantJobBusy(t, "the late answer", err, j.ID)
	if n := count(t, b, `SELECT count(*) FROM attempts WHERE id = $1 AND state = 'running'`, hedge.ID); n != 1 {
		t.Fatal("the late answer's attempt left flight though nothing was recorded")
	}

	if err := holder.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	if o, err := b.st.OfferCompletion(ctx, win(j, hedge)); err != nil || o.Won || o.State != store.AttemptLost {
		t.Fatalf("the late answer once the row is free: %+v, err %v; want recorded lost", o, err)
	}
}

// An attempt's other ends — a failure, a loser cancelled after the win —
// give up on a job row another transaction holds with ErrBusy after a bounded
// wait, recording nothing (the attempt is left to its lease), and are recorded
// once the row is free. Before, FinishAttempt locked the job row with no
// lock_timeout: the attempt's goroutine waited as long as the row was held.
func TestFinishAttemptGivesUpOnAHeldJob(t *testing.T) {
	for _, tc := range []struct {
		name string
		won  bool // the job is won first: the attempt is a loser
		out  store.AttemptOutcome
	}{
		{"failure", false, store.AttemptOutcome{State: store.AttemptFailed,
			Error: map[string]any{"kind": "server_error", "fault": "provider"}}},
		{"loser", true, store.AttemptOutcome{State: store.AttemptCancelled,
			Error: map[string]any{"kind": "cancelled", "message": "cancelled: another attempt won"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := setup(t)
			ctx := context.Background()
			j, first := b.running(t, "finish-held")
			a := startAttempt(t, b, j.ID, "p2", store.RoleHedge)
			if tc.won {
				if won, err := b.st.Complete(ctx, win(j, first)); err != nil || !won {
					t.Fatalf("win: %v %v", won, err)
				}
			}
			holder, pid := b.hold(t, `UPDATE jobs SET error = error WHERE id = $1`, j.ID)

			err := b.whileHeld(t, pid, "FinishAttempt", func(ctx context.Context) error {
				return b.st.FinishAttempt(ctx, a.ID, tc.out)
			})
			wantJobBusy(t, "FinishAttempt", err, j.ID)
			if n := count(t, b, `SELECT count(*) FROM attempts WHERE id = $1 AND state = 'running'`, a.ID); n != 1 {
				t.Fatal("the attempt changed though its end gave up")
			}

			if err := holder.Rollback(ctx); err != nil {
				t.Fatal(err)
			}
			if err := b.st.FinishAttempt(ctx, a.ID, tc.out); err != nil {
				t.Fatalf("FinishAttempt once the row is free: %v", err)
			}
			if n := count(t, b, `SELECT count(*) FROM attempts WHERE id = $1 AND state = $2`, a.ID, tc.out.State); n != 1 {
				t.Fatalf("the attempt is not %s once its end was recorded", tc.out.State)
			}
		})
	}
}

// A cancellation gives up on a job row another transaction holds with
// ErrBusy after a bounded wait (the API answers 503 busy, retry shortly),
// changing nothing, and cancels once the row is free. Before, CancelJob
// waited for the row with no lock_timeout, as long as it was held.
func TestCancelJobGivesUpOnAHeldJob(t *testing.T) {
	b := setup(t)
	ctx := context.Background()
	j, a := b.running(t, "cancel-held")
	holder, pid := b.hold(t, `UPDATE jobs SET error = error WHERE id = $1`, j.ID)

	err := b.whileHeld(t, pid, "CancelJob", func(ctx context.Context) error {
		return b.st.CancelJob(ctx, "acme", j.ID)
	})
	wantJobBusy(t, "CancelJob", err, j.ID)
	if n := count(t, b, `SELECT count(*) FROM attempts WHERE id = $1 AND state = 'running'`, a.ID); n != 1 {
		t.Fatal("the attempt changed though the cancellation gave up")
	}

	if err := holder.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	if err := b.st.CancelJob(ctx, "acme", j.ID); err != nil {
		t.Fatalf("CancelJob once the row is free: %v", err)
	}
	if n := count(t, b, `SELECT count(*) FROM jobs WHERE id = $1 AND state = 'cancelled'`, j.ID); n != 1 {
		t.Fatal("the job is not cancelled")
	}
}

// Recording a job's routing gives up on a job row another transaction holds
// with ErrBusy after a bounded wait, recording nothing. Before, SetRouting
// waited for the row with no lock_timeout, holding its orchestrator's run.
func TestSetRoutingGivesUpOnAHeldJob(t *testing.T) {
	b := setup(t)
	ctx := context.Background()
	j, _ := b.running(t, "routing-held")
	if ok, err := b.st.AcquireJobLease(ctx, j.ID, "me", time.Minute); err != nil || !ok {
		t.Fatalf("lease: %v %v", ok, err)
	}
	routing := json.RawMessage(`[{"provider":"p1","eligible":true}]`)
	holder, pid := b.hold(t, `UPDATE jobs SET error = error WHERE id = $1`, j.ID)

	err := b.whileHeld(t, pid, "SetRouting", func(ctx context.Context) error {
		return b.st.SetRouting(ctx, j.ID, "me", routing)
	})
	wantJobBusy(t, "SetRouting", err, j.ID)

	if err := holder.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	if n := count(t, b, `SELECT count(*) FROM jobs WHERE id = $1 AND routing IS NOT NULL`, j.ID); n != 0 {
		t.Fatal("a routing record that gave up was stored")
	}
	if err := b.st.SetRouting(ctx, j.ID, "me", routing); err != nil {
		t.Fatalf("SetRouting once the row is free: %v", err)
	}
	if n := count(t, b, `SELECT count(*) FROM jobs WHERE id = $1 AND routing IS NOT NULL`, j.ID); n != 1 {
		t.Fatal("the routing was not recorded")
	}
}
