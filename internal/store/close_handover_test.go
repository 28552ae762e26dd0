package store_test

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/routerhq/router/internal/store"
)

// A job created while the replica stops, whose claim's answer was lost, is
// handed over in the background (handOverLostClaim) after its handler has
// returned. The server waited for its handlers, then closed the Store and
// the pool at once: the hand-over's next try found the pool closed, retried
// that for a minute and gave up, and the job's first attempt, never sent,
// became `unknown` at lease expiry (SPEC §17). Close now waits for the
// hand-over, which settles the job on the still open pool. Found by review.
func TestCloseWaitsForLostClaimHandOver(t *testing.T) {
	b := setup(t)
	ctx := context.Background()
	st, pool, d, down := outageStoreWithPool(t, b, store.Options{KeyRetention: time.Hour})
	handedOver := make(chan error, 1)
	st.SetOnLostClaim(func(err error) { handedOver <- err })
	nj := newJob(t, "acme", "triage", "outage", `{"n":1}`)
	nj.LeaseOwner, nj.LeaseFor = "replica-a", time.Minute
	nj.First = &store.FirstAttempt{Provider: "p1", Role: store.RolePrimary}
	d.onDrop = func() { down.Store(true) } // the database goes away right after the commit, before the claim is tried again
	d.armed.Store(true)
	if _, _, err := st.CreateJob(ctx, nj); err == nil {
		t.Fatal("CreateJob succeeded: the outage did not outlast its retries, and the test shows nothing")
	}
	// The database answers again as the replica stops: the hand-over, between
	// two tries, has not settled the job yet.
	down.Store(false)
	st.Close()
	pool.Close() // as the server does next
	select {
	case err := <-handedOver:
		if err != nil {
			t.Fatalf("the hand-over of the lost claim ended with %v", err)
		}
	default:
		t.Fatal("Store.Close returned while the hand-over of a lost claim was still running: the pool is closed under it, " +
			"and its job's first attempt, never sent, becomes unknown at lease expiry")
	}
	if n := count(t, b, `SELECT count(*) FROM jobs WHERE idempotency_key = 'outage' AND state IN ('pending', 'running')
			AND lease_owner IS NULL AND lease_expires_at <= now()`); n != 1 {
		t.Fatal("the committed job was not handed over: want it live, its lease released")
	}
	if n := count(t, b, `SELECT count(*) FROM attempts a JOIN jobs j ON j.id = a.job_id
			WHERE j.idempotency_key = 'outage' AND a.state = 'cancelled' AND a.error->>'kind' = 'not_sent'`); n != 1 {
		t.Fatal("the first attempt, never sent, is not recorded as not_sent")
	}
}

// Close's wait for background writes is bounded: a hand-over that cannot end
// (the database does not answer) is logged, naming its job, and cancelled,
// and has returned when Close does (no goroutine outlives the Store, dialling
// a closed pool for a minute). The waits are set so that the test does not
// depend on how long anything takes: Close stops waiting at once, and waits
// for the cancelled hand-over to return as long as it takes.
func TestCloseCancelsHandOverPastItsWait(t *testing.T) {
	defer store.SetBackgroundCloseWaits(0, time.Hour)()
	b := setup(t)
	ctx := context.Background()
	logs := recordHandler{records: make(chan slog.Record, 64)}
	st, _, d, down := outageStoreWithPool(t, b, store.Options{KeyRetention: time.Hour, Log: slog.New(logs)})
	handedOver := make(chan error, 1)
	st.SetOnLostClaim(func(err error) { handedOver <- err })
	nj := newJob(t, "acme", "triage", "outage", `{"n":1}`)
	nj.LeaseOwner, nj.LeaseFor = "replica-a", time.Minute
	nj.First = &store.FirstAttempt{Provider: "p1", Role: store.RolePrimary}
	d.onDrop = func() { down.Store(true) } // the database goes away right after the commit (before the claim is tried again), and stays away
	d.armed.Store(true)
	if _, _, err := st.CreateJob(ctx, nj); err == nil {
		t.Fatal("CreateJob succeeded: the outage did not outlast its retries, and the test shows nothing")
	}
	st.Close()
	select {
	case err := <-handedOver:
		if err == nil {
			t.Fatal("the hand-over succeeded while the database did not answer")
		}
	default:
		t.Fatal("Store.Close returned while the hand-over of a lost claim was still running")
	}
	jobID := jobByKey(t, b, "outage") // the claim committed
	var said, ended bool
	for len(logs.records) > 0 {
		r := <-logs.records
		switch {
		case strings.HasPrefix(r.Message, "background database writes still running at close after waiting for them"):
			said = true
			left, _ := recordAttrs(r)["left"].Any().([]string)
			if len(left) != 1 || !strings.Contains(left[0], jobID) {
				t.Errorf("Close's line names %q as left, want the hand-over of job %s", left, jobID)
			}
			if ended {
				t.Error("Close's line came after the hand-over had ended")
			}
		case r.Message == "could not hand over a job whose creation's outcome was lost; recovery settles it when its lease expires":
			ended = true
		}
	}
	if !said {
		t.Fatal("Close did not say it left a hand-over running past its wait")
	}
	if !ended {
		t.Fatal("the cancelled hand-over did not say it could not hand over its job")
	}
}
