package store_test

import (
	"context"
	"encoding/json"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/routerhq/router/internal/store"
)

// commitCounter counts durable commits.
type commitCounter struct{ commits atomic.Int64 }

func (c *commitCounter) DurableCommit()    { c.commits.Add(1) }
func (c *commitCounter) Batch(string, int) {}

// pathSetup makes a store that counts its commits, and a running job whose
// only attempt can win.
func pathSetup(t *testing.T, key string) (*store.Store, *commitCounter, *store.Job, *bundle) {
	t.Helper()
	b := setup(t)
	obs := &commitCounter{}
	st := store.New(b.db.Pool, store.Options{Observer: obs})
	nj := newJob(t, "acme", "triage", key, `{"k":"`+key+`"}`)
	nj.First, nj.LeaseOwner = &store.FirstAttempt{Provider: "p", Role: store.RolePrimary}, "r1"
	j, _, err := st.CreateJob(context.Background(), nj)
	if err != nil {
		t.Fatal(err)
	}
	obs.commits.Store(0)
	return st, obs, j, b
}

func winOf(j *store.Job) store.Completion {
	a := j.Attempts[0]
	return store.Completion{JobID: j.ID, AttemptID: a.ID, ReadVersion: a.ReadVersion, Result: json.RawMessage(`{}`)}
}

// Issue 11: one job's claim and another's win that wait for the database at
// the same time go out together: one transaction, one durable commit.
func TestClaimAndWinShareOneCommit(t *testing.T) {
	st, obs, running, b := pathSetup(t, "running")
	ctx := context.Background()
	nj := newJob(t, "acme", "triage", "new", `{"k":"new"}`)
	nj.First, nj.LeaseOwner = &store.FirstAttempt{Provider: "p", Role: store.RolePrimary}, "r1"
	created, claimErrs, won, winErrs := st.PathBatch(ctx, []store.NewJob{nj}, []store.Completion{winOf(running)})
	if claimErrs[0] != nil || !created[0] || winErrs[0] != nil || !won[0] {
		t.Fatalf("claim: created=%v err=%v; win: won=%v err=%v", created[0], claimErrs[0], won[0], winErrs[0])
	}
	if n := obs.commits.Load(); n != 1 {
		t.Fatalf("%d durable commits for a claim and a win, want 1", n)
	}
	// Rows written by one transaction carry its id.
	var txs int
	if err := b.db.Pool.QueryRow(ctx, `SELECT count(DISTINCT xmin::text) FROM jobs
		WHERE id = $1 OR idempotency_key = 'new'`, running.ID).Scan(&txs); err != nil || txs != 1 {
		t.Fatalf("the claim and the win were written by %d transactions (%v), want 1", txs, err)
	}
	if got := count(t, b, `SELECT count(*) FROM jobs WHERE id = $1 AND state = 'succeeded'`, running.ID); got != 1 {
		t.Fatal("the win did not complete its job")
	}
}

// A claim that fails does not fail the win that shared its batch: the batch is
// run again kind by kind, and only the claim reports the error — with nothing
// of it written.
func TestAFailingClaimDoesNotFailTheWinBesideIt(t *testing.T) {
	st, _, running, b := pathSetup(t, "running")
	ctx := context.Background()
	bad := newJob(t, "acme", "triage", "bad", `{}`)
	bad.Input = json.RawMessage(`{"not json`) // the database refuses it
	created, claimErrs, won, winErrs := st.PathBatch(ctx, []store.NewJob{bad}, []store.Completion{winOf(running)})
	if claimErrs[0] == nil || created[0] {
		t.Fatalf("the bad claim: created=%v err=%v; want an error", created[0], claimErrs[0])
	}
	if winErrs[0] != nil || !won[0] {
		t.Fatalf("the win beside it: won=%v err=%v", won[0], winErrs[0])
	}
	if got := count(t, b, `SELECT count(*) FROM idempotency_keys WHERE idempotency_key = 'bad'`); got != 0 {
		t.Fatalf("the failed claim left %d key rows", got)
	}
}

// waitRecorder is an Observer that also times commit waits.
type waitRecorder struct {
	commitCounter
	mu    sync.Mutex
	waits map[string][]time.Duration
}

func (w *waitRecorder) CommitWait(kind string, d time.Duration) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.waits[kind] = append(w.waits[kind], d)
}

// An observer that times commit waits is told of each claim's and each win's
// wait (router_db_commit_wait_seconds), from the moment it is queued to its
// batch's outcome; one that does not is not required to.
func TestCommitWaitsReachTheObserver(t *testing.T) {
	b := setup(t)
	ctx := context.Background()
	obs := &waitRecorder{waits: map[string][]time.Duration{}}
	st := store.New(b.db.Pool, store.Options{Observer: obs})
	// A claim's batch that takes at least hold after its commit: its wait,
	// timed from the queue to the outcome, holds it.
	const hold = 20 * time.Millisecond
	st.SetAfterClaimCommit(func(string) { time.Sleep(hold) })
	nj := newJob(t, "acme", "triage", "waits", `{"k":"waits"}`)
	nj.First, nj.LeaseOwner = &store.FirstAttempt{Provider: "p", Role: store.RolePrimary}, "r1"
	j, created, err := st.CreateJob(ctx, nj)
	if err != nil || !created {
		t.Fatalf("claim: created=%v err=%v", created, err)
	}
	if _, _, err := st.CreateJob(ctx, nj); err != nil { // the same key again: a claim too
		t.Fatal(err)
	}
	if won, err := st.Complete(ctx, winOf(j)); err != nil || !won {
		t.Fatalf("win: won=%v err=%v", won, err)
	}
	obs.mu.Lock()
	defer obs.mu.Unlock()
	if len(obs.waits["claim"]) != 2 || len(obs.waits["win"]) != 1 || len(obs.waits) != 2 {
		t.Fatalf("waits told: %v, want 2 claims and 1 win", obs.waits)
	}
	for _, d := range obs.waits["claim"] {
		if d < hold {
			t.Errorf("a claim waited %v, less than its batch took after committing (%v)", d, hold)
		}
	}
	if d := obs.waits["win"][0]; d <= 0 {
		t.Errorf("the win waited %v: a commit's wait includes its round trip", d)
	}
}

// A batch of wins that all lose the compare-and-swap writes nothing: its
// commit waits for no WAL flush, and is not counted as a durable commit.
func TestALosingWinBatchIsNoDurableCommit(t *testing.T) {
	st, obs, running, _ := pathSetup(t, "running")
	ctx := context.Background()
	c := winOf(running)
	if _, _, won, errs := st.PathBatch(ctx, nil, []store.Completion{c}); errs[0] != nil || !won[0] {
		t.Fatalf("the first win: won=%v err=%v", won[0], errs[0])
	}
	if n := obs.commits.Swap(0); n != 1 {
		t.Fatalf("%d durable commits for a win, want 1", n)
	}
	if _, _, won, errs := st.PathBatch(ctx, nil, []store.Completion{c}); errs[0] != nil || won[0] {
		t.Fatalf("the same win again: won=%v err=%v; want it lost", won[0], errs[0])
	}
	if n := obs.commits.Load(); n != 0 {
		t.Fatalf("%d durable commits for a batch whose only win lost its compare-and-swap and wrote nothing, want 0", n)
	}
}
