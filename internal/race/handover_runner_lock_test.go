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
// another session, up to the store's exit lock wait), every other user of the
// mutex — Runs, which each waiter asks, other submits, the lease keeper, the
// end of every job run — waited behind it. Found in review.
func TestHandOverWhileDrainingDoesNotHoldTheRunner(t *testing.T) {
	b := setup(t, race.Route{}, provSpec{name: "primary", respond: ok(validTriage)})
	job := b.submitWithoutRunning(t, "test-runner")
	if job.HeldBy != "test-runner" {
		t.Fatalf("job held by %q, want the runner", job.HeldBy)
	}
	pid, release := holdRows(t, b, `SELECT 1 FROM jobs WHERE id = $1 FOR UPDATE`, job.ID)

	b.runner.Drain(time.Minute)
	handedOver := make(chan struct{})
	go func() { defer close(handedOver); b.runner.SubmitNew(job, nil) }() // a POST /v1/jobs as the drain began
	awaitLockWaiter(t, b, pid, releaseLeaseMarker)

	if b.runner.Runs("00000000-0000-0000-0000-000000000000") { // a waiter's question
		t.Fatal("Runs reports an unknown job running")
	}
	select {
	case <-handedOver:
		t.Fatal("Runs returned only once the hand-over had ended: it waited behind the hand-over's database write")
	default:
	}
	if !lockWaiter(t, b, pid, releaseLeaseMarker) {
		t.Fatal("Runs returned only once the hand-over's write had stopped waiting for the held row: it waited behind it")
	}

	release()
	<-handedOver
	var owner *string
	if err := b.db.Pool.QueryRow(context.Background(), `SELECT lease_owner FROM jobs WHERE id = $1`, job.ID).Scan(&owner); err != nil {
		t.Fatal(err)
	}
	if owner != nil {
		t.Fatalf("after the hand-over the job's lease is still held by %q", *owner)
	}
}
