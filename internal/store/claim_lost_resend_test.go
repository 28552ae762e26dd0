package store_test

import (
	"context"
	"sync"
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

			// After the answer is lost, the batch that carries the resend
			// waits until the lost claim's retry has queued behind it.
			bothQueued, heldForRetry := make(chan struct{}), make(chan struct{})
			var once, held sync.Once
			st.SetPathBatchHooks(func() {
				select {
				case <-d.dropped:
					<-bothQueued
					held.Do(func() { close(heldForRetry) })
				default:
				}
			}, func(n int) {
				if n >= 2 {
					once.Do(func() { close(bothQueued) })
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
			<-d.dropped
			// The resend must lead a batch of its own (not ride behind the
			// lost try's leader): wait for that leader to leave. The lost
			// claim's retry comes 50 ms after its failure.
			for st.PathLeaders() != 0 {
				time.Sleep(time.Millisecond)
			}
			go func() { j, c, err := st.CreateJob(ctx, resend); second <- out{j, c, err} }()
			a, r := <-first, <-second
			select {
			case <-heldForRetry:
			default:
				t.Fatal("the resend did not lead a batch with the lost claim's retry behind it: the test did not set up its case")
			}
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
