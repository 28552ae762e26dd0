package store_test

import (
	"context"
	"testing"

	"github.com/routerhq/router/internal/store"
)

// A replay-only claim (the owner at max_live_jobs, or no eligible provider)
// that shares its batch with an ordinary claim of the same key, while another
// replica's takeover of the expired key commits during the batch: the
// ordinary claim, which waited on the key row, reads the key again and
// replays the new job; the replay-only duplicate takes its outcome and must
// replay that job too, not be told that the key holds no job (the API's
// "nothing was stored" 429/503 for a request whose job is running). Found by
// review.
//
// The batch waits on the key row until the takeover commits (hangGuard in
// batchLockWait's place): the test commits it once pg_stat_activity shows the
// batch waiting, and with the batch's 100 ms lock wait a loaded machine that
// took longer to commit failed the batch busy (flaked under load).
func TestReplayOnlyDuplicateSeesTakeoverCommittedDuringBatch(t *testing.T) {
	b := setup(t)
	k := takeOverInFlight(t, b) // a new job bound to {"n":2}, not committed yet
	nj := newJob(t, "acme", "triage", "daily", `{"n":2}`)
	var (
		jobs    []*store.Job
		created []bool
		errs    []error
	)
	done := make(chan struct{})
	go func() {
		defer close(done)
		jobs, created, errs = b.st.ClaimOneBatchWaiting(context.Background(), []store.NewJob{nj, replayOnly(nj)}, hangGuard)
	}()
	k.commitOnceWaitedOn(t, b.db.Pool, done)
	<-done
	for i, what := range []string{"claim", "replay-only duplicate"} {
		if errs[i] != nil || created[i] || jobs[i] == nil || jobs[i].ID != k.newID {
			t.Errorf("%s: job %v created=%v err=%v; want a replay of the job %s that holds the key", what, jobs[i], created[i], errs[i], k.newID)
		}
	}
	if n := count(t, b, `SELECT count(*) FROM jobs WHERE idempotency_key = 'daily'`); n != 2 {
		t.Fatalf("%d jobs for the key; want 2 (the expired one and the one that took it over)", n)
	}
}
