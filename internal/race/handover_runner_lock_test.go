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

// storeExitLockWait is store.exitLockWait (internal/store/joblease.go, not
// exported): how long the hand-over's write waits for the held row before it
// gives up, leaving the lease held.
const storeExitLockWait = 2 * time.Second

// A job created as the drain begins is handed over (its lease released) by
// the submit that will not run it. The hand-over used to run with the
// runner's mutex held: while its write waited on the job's row (held here by
// another session, up to the store's exit lock wait), every other user of the
// mutex — Runs, which each waiter asks, other submits, the lease keeper, the
// end of every job run — waited behind it. Found in review.
//
// The test looks while the write waits, which it does for storeExitLockWait
// at most: a test held up that long (a loaded machine) finds it given up.
// Such a try proves nothing either way and is run again, when Runs itself
// was quick; a Runs that waits behind the write fails.
func TestHandOverWhileDrainingDoesNotHoldTheRunner(t *testing.T) {
	b := setup(t, race.Route{}, provSpec{name: "primary", respond: ok(validTriage)})
	b.runner.Drain(time.Minute)
	for try := 1; !handOverWhileRowHeld(t, b); try++ {
		if try == 5 {
			t.Fatal("in 5 tries the hand-over's write gave up on the held row (the store's exit lock wait) before the test could look")
		}
	}
}

// handOverWhileRowHeld runs the scenario once: false when it was
// inconclusive (the hand-over's write gave up on the held row before the
// test had looked), failing the test when Runs waited behind the write.
func handOverWhileRowHeld(t *testing.T, b *bundle) bool {
	t.Helper()
	job := b.submitWithoutRunning(t, "test-runner")
	if job.HeldBy != "test-runner" {
		t.Fatalf("job held by %q, want the runner", job.HeldBy)
	}
	pid, release := holdRows(t, b, `SELECT 1 FROM jobs WHERE id = $1 FOR UPDATE`, job.ID)
	defer release()
	handedOver := make(chan struct{})
	began := time.Now()
	go func() { defer close(handedOver); b.runner.SubmitNew(job, nil) }() // a POST /v1/jobs as the drain began
	awaitLockWaiter(t, b, pid, releaseLeaseMarker)
	// gaveUp: the hand-over has ended without releasing the lease, its
	// write having waited out storeExitLockWait on the held row.
	gaveUp := func() bool {
		select {
		case <-handedOver:
			return time.Since(began) >= storeExitLockWait && leaseOwner(t, b, job.ID) != ""
		default:
			return false
		}
	}

	asked := time.Now()
	if b.runner.Runs("00000000-0000-0000-0000-000000000000") { // a waiter's question
		t.Fatal("Runs reports an unknown job running")
	}
	runsTook := time.Since(asked)
	select {
	case <-handedOver:
		if runsTook < time.Second && gaveUp() {
			return false
		}
		t.Fatal("Runs returned only once the hand-over had ended: it waited behind the hand-over's database write")
	default:
	}
	if !lockWaiter(t, b, pid, releaseLeaseMarker) {
		<-handedOver
		if runsTook < time.Second && gaveUp() {
			return false
		}
		t.Fatal("Runs returned only once the hand-over's write had stopped waiting for the held row: it waited behind it")
	}

	release()
	<-handedOver
	if owner := leaseOwner(t, b, job.ID); owner != "" {
		if time.Since(began) >= storeExitLockWait {
			return false // the write gave up just before the release
		}
		t.Fatalf("after the hand-over the job's lease is still held by %q", owner)
	}
	return true
}
