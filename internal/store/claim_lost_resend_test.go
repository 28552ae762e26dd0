package store_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/routerhq/router/internal/store"
)

// A claim whose commit answer was lost is tried again with the same job id;
// when a resent copy of the request (same key) lands in the same batch ahead
// of that retry, the resend finds the key first and the batch reported its
// holder — the retry's own job — to the retry as someone else's. Neither
// caller was told "created", nobody ran the job, and its never-sent first
// attempt went unknown at lease expiry. Found by review.
func TestLostClaimRetriedBehindAResendIsCreated(t *testing.T) {
	for _, resendInput := range []string{`{"n":1}`, `{"n":2}`} { // the same request; another intent under the key
		t.Run(resendInput, func(t *testing.T) {
			b := setup(t)
			ctx := context.Background()
			st, d := droppingStore(t, b)
			nj := newJob(t, "acme", "triage", "lost-then-resent", `{"n":1}`)
			nj.First, nj.LeaseOwner, nj.LeaseFor = &store.FirstAttempt{Provider: "p1", Role: store.RolePrimary}, "replica-a", time.Minute
			resend := newJob(t, "acme", "triage", "lost-then-resent", resendInput)
			resend.First, resend.LeaseOwner, resend.LeaseFor = nj.First, "replica-a", time.Minute

			// After the answer is lost, the lost claim's retry is held before
			// it is queued until the resend leads a batch of its own (not
			// behind the lost try's leader, which left before CreateJob
			// retried); that batch then waits until the retry has queued
			// behind it. Signals, not the retry's delay: the order is the
			// same on any machine.
			retryComing, resendLeading := make(chan struct{}), make(chan struct{})
			bothQueued, heldForRetry := make(chan struct{}), make(chan struct{})
			stop := make(chan struct{}) // the test has ended: let held callers go
			t.Cleanup(func() { close(stop) })
			var afterDrop atomic.Int32
			var leadOnce, queuedOnce, heldOnce sync.Once
			st.SetBeforePathEnqueue(func() {
				select {
				case <-d.dropped:
				default:
					return // the first try
				}
				if afterDrop.Add(1) != 1 {
					return // the resend
				}
				close(retryComing)
				select {
				case <-resendLeading:
				case <-stop:
				}
			})
			st.SetPathBatchHooks(func() {
				select {
				case <-d.dropped:
				default:
					return // the first try's batch
				}
				leadOnce.Do(func() { close(resendLeading) })
				select {
				case <-bothQueued:
					heldOnce.Do(func() { close(heldForRetry) })
				case <-stop:
				}
			}, func(n int) {
				if n >= 2 {
					queuedOnce.Do(func() { close(bothQueued) })
				}
			})
			type out struct {
				job     *store.Job
				created bool
				err     error
			}
			first, second := make(chan out, 1), make(chan out, 1)
			d.armed.Store(true)
			go func() { j, c, err := st.CreateJob(ctx, nj); first <- out{j, c, err} }()
			awaitClosed(t, d.dropped, "no answer was dropped: the test did not inject its failure")
			awaitClosed(t, retryComing, "the claim whose answer was lost was never tried again")
			if n := st.PathLeaders(); n != 0 {
				t.Fatalf("%d leaders while the lost claim's retry waits: the resend would not lead a batch of its own", n)
			}
			go func() { j, c, err := st.CreateJob(ctx, resend); second <- out{j, c, err} }()
			awaitClosed(t, heldForRetry, "the resend did not lead a batch with the lost claim's retry behind it: the test did not set up its case")
			a, r := awaitOut(t, first, "the claim whose answer was lost"), awaitOut(t, second, "the resend")
			if a.err != nil || !a.created {
				t.Fatalf("the claim whose answer was lost: created=%v err=%v; want created (its job is in the database)", a.created, a.err)
			}
			if resendInput == `{"n":1}` && (r.err != nil || r.created || r.job.ID != a.job.ID) {
				t.Fatalf("the resend: created=%v err=%v; want the existing job", r.created, r.err)
			}
			if resendInput != `{"n":1}` && r.err != store.ErrKeyReused {
				t.Fatalf("the resend with another input: %v; want ErrKeyReused", r.err)
			}
			if n := count(t, b, `SELECT count(*) FROM jobs WHERE idempotency_key = 'lost-then-resent'`); n != 1 {
				t.Fatalf("jobs = %d, want 1", n)
			}
		})
	}
}

// awaitClosed waits until ch is closed, and fails the test with why if it is
// not within hangGuard (a hang, not a slow machine).
func awaitClosed(t *testing.T, ch <-chan struct{}, why string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(hangGuard):
		t.Fatal(why)
	}
}

// awaitOut waits for a result on ch, and fails the test if none comes within
// hangGuard.
func awaitOut[T any](t *testing.T, ch <-chan T, who string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(hangGuard):
		t.Fatalf("%s: CreateJob never returned", who)
	}
	var none T
	return none
}
