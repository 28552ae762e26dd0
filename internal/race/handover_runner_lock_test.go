package race_test

import (
	"context"
	"testing"
	"time"

	"github.com/routerhq/router/internal/race"
)

// releaseLeaseMarker is in the text of store.ReleaseJobLease's statement.
const releaseLeaseMarker = "SET lease_owner = NULL, lease_expires_at = now()"

// lockWaiter reports whether a statement whose text contains marker waits
// for a lock that backend pid holds.
func lockWaiter(t *testing.T, b *bundle, pid int, marker string) bool {
	t.Helper()
	var waiting bool
	if err := b.db.Pool.QueryRow(context.Background(), `SELECT EXISTS (SELECT FROM pg_stat_activity
		WHERE wait_event_type = 'Lock' AND $1 = ANY (pg_blocking_pids(pid)) AND strpos(query, $2) > 0)`,
		pid, marker).Scan(&waiting); err != nil {
		t.Fatal(err)
	}
	return waiting
}

// awaitLockWaiter waits until lockWaiter is true (polled, failing after
// hangBound).
func awaitLockWaiter(t *testing.T, b *bundle, pid int, marker string) {
	t.Helper()
	for deadline := time.Now().Add(hangBound); !lockWaiter(t, b, pid, marker); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("no statement with %q ever waited for the locks of backend %d", marker, pid)
		}
	}
}

// A job created as the drain begins is handed over (its lease released) by
// the submit that will not run it. The hand-over used to run with the
// runner's mutex held: while its write waited on the job's row (held here by
// another session, up to the store's exit lock wait, 2 s), every other user
// of the mutex — Runs, which each waiter asks, other submits, the lease
// keeper, the end of every job run — waited behind it. Found in review.
//
// The test judges by order, not by time: Runs must answer while the
// hand-over's write still waits on the held row. A try in which the write
// ended first (it gave up on the row, or the machine stalled the test past
// the store's wait) proves nothing either way and is run again; a Runs that
// waits behind the write never answers first, so every try is inconclusive
// and the test fails.
func TestHandOverWhileDrainingDoesNotHoldTheRunner(t *testing.T) {
	b := setup(t, race.Route{}, provSpec{name: "primary", respond: ok(validTriage)})
	b.runner.Drain(time.Minute)
	for try := 1; !handOverWhileRowHeld(t, b); try++ {
		if try == 5 {
			t.Fatal("in 5 tries Runs never answered while the hand-over's write waited on the held row: it waits behind the hand-over " +
				"(or the hand-over never released the lease)")
		}
	}
}

// handOverWhileRowHeld runs the scenario once: true when Runs answered while
// the hand-over's write still waited, and the lease was released once the
// row was; false when inconclusive (the write ended first).
func handOverWhileRowHeld(t *testing.T, b *bundle) bool {
	t.Helper()
	job := b.submitWithoutRunning(t, "test-runner")
	if job.HeldBy != "test-runner" {
		t.Fatalf("job held by %q, want the runner", job.HeldBy)
	}
	pid, release := holdRows(t, b, `SELECT 1 FROM jobs WHERE id = $1 FOR UPDATE`, job.ID)
	defer release()
	handedOver := make(chan struct{})
	go func() { defer close(handedOver); b.runner.SubmitNew(job, nil) }() // a POST /v1/jobs as the drain began
	awaitLockWaiter(t, b, pid, releaseLeaseMarker)

	runs := make(chan bool, 1)
	go func() { runs <- b.runner.Runs("00000000-0000-0000-0000-000000000000") }() // a waiter's question
	if <-runs {
		t.Fatal("Runs reports an unknown job running")
	}
	select {
	case <-handedOver:
		return false // the write had ended by the time Runs answered: no order to judge
	default:
	}
	// Runs answered while the hand-over was still under way. Once the row is
	// free the write goes through.
	release()
	<-handedOver
	return leaseOwner(t, b, job.ID) == "" // still held: the write gave up before the release
}
