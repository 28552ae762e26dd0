package store_test

import (
	"context"
	"encoding/json"
	"sync"
	"testing"
	"time"

	"github.com/routerhq/router/internal/store"
	"github.com/routerhq/router/internal/testdb"
)

// commitLog is an Observer that records durable commits and batch sizes.
type commitLog struct {
	mu      sync.Mutex
	durable int
	batches map[string][]int
}

func (o *commitLog) DurableCommit() { o.mu.Lock(); o.durable++; o.mu.Unlock() }
func (o *commitLog) Batch(kind string, size int) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.batches == nil {
		o.batches = map[string][]int{}
	}
	o.batches[kind] = append(o.batches[kind], size)
}

func (o *commitLog) reset() { o.mu.Lock(); o.durable, o.batches = 0, nil; o.mu.Unlock() }

func (o *commitLog) check(t *testing.T, durable int, batches map[string][]int) {
	t.Helper()
	o.mu.Lock()
	defer o.mu.Unlock()
	ok := o.durable == durable && len(o.batches) == len(batches)
	for kind, sizes := range batches {
		ok = ok && len(o.batches[kind]) == len(sizes)
		for i := range sizes {
			ok = ok && i < len(o.batches[kind]) && o.batches[kind][i] == sizes[i]
		}
	}
	if !ok {
		t.Errorf("told %d durable commits and batches %v, want %d and %v: a batch that failed committed nothing", o.durable, o.batches, durable, batches)
	}
}

// A claim and a win share a batch; the claim's input is refused, so the
// batch fails, and each is run again on its own: the claim fails again, the
// win commits. One commit, of one win: the failed batch and the failed claim
// are neither durable commits nor batches.
func TestFailedPathBatchIsNoDurableCommit(t *testing.T) {
	obs := &commitLog{}
	db := testdb.New(t, store.Options{Observer: obs})
	st, ctx := db.Store, context.Background()
	nj := newJob(t, "acme", "triage", "running", `{"k":"running"}`)
	nj.First, nj.LeaseOwner = &store.FirstAttempt{Provider: "p", Role: store.RolePrimary}, "r1"
	running, _, err := st.CreateJob(ctx, nj)
	if err != nil {
		t.Fatal(err)
	}
	obs.reset()
	bad := newJob(t, "acme", "triage", "bad", `{}`)
	bad.Input = json.RawMessage(`{"not json`) // the database refuses it
	created, claimErrs, won, winErrs := st.PathBatch(ctx, []store.NewJob{bad}, []store.Completion{winOf(running)})
	if claimErrs[0] == nil || created[0] || winErrs[0] != nil || !won[0] {
		t.Fatalf("precondition: claim created=%v err=%v (want an error); win won=%v err=%v", created[0], claimErrs[0], won[0], winErrs[0])
	}
	obs.check(t, 1, map[string][]int{"win": {1}})
}

// A win whose answer the database refuses (a NUL in its result) fails its
// batch: nothing committed, and nothing is counted.
func TestFailedWinIsNoDurableCommit(t *testing.T) {
	obs := &commitLog{}
	db := testdb.New(t, store.Options{Observer: obs})
	st, ctx := db.Store, context.Background()
	nj := newJob(t, "acme", "triage", "running", `{"k":"running"}`)
	nj.First, nj.LeaseOwner = &store.FirstAttempt{Provider: "p", Role: store.RolePrimary}, "r1"
	running, _, err := st.CreateJob(ctx, nj)
	if err != nil {
		t.Fatal(err)
	}
	obs.reset()
	bad := winOf(running)
	bad.Result = json.RawMessage(`{"x":"\u0000"}`)
	_, _, won, winErrs := st.PathBatch(ctx, nil, []store.Completion{bad})
	if winErrs[0] == nil || won[0] {
		t.Fatalf("precondition: the win was expected to fail: won=%v err=%v", won[0], winErrs[0])
	}
	var state string
	if qerr := db.Pool.QueryRow(ctx, `SELECT state FROM jobs WHERE id = $1`, running.ID).Scan(&state); qerr != nil || state != "running" {
		t.Fatalf("precondition: the job is %q (%v), want still running", state, qerr)
	}
	obs.check(t, 0, nil)
}

// A webhook delivery's write that the database refuses (a NUL in its
// error text) fails its batch and then itself alone: nothing committed, and
// nothing is counted.
func TestFailedDeliveryWriteIsNoDurableCommit(t *testing.T) {
	obs := &commitLog{}
	db := testdb.New(t, store.Options{Observer: obs})
	st, ctx := db.Store, context.Background()
	ev := events(t, st, db, 1)
	obs.reset()
	_, err := st.RecordDelivery(ctx, store.DeliveryTry{EventID: ev[0], Try: 1, URL: "https://acme.example/hook",
		StartedAt: time.Now(), Latency: time.Millisecond, Error: "no\x00answer", Status: store.EventPending})
	if err == nil {
		t.Fatal("precondition: the write was expected to fail")
	}
	var tries int
	if qerr := db.Pool.QueryRow(ctx, `SELECT count(*) FROM webhook_deliveries`).Scan(&tries); qerr != nil || tries != 0 {
		t.Fatalf("precondition: %d tries recorded (%v), want none", tries, qerr)
	}
	obs.check(t, 0, nil)
}

// A batch of two delivery tries fails on one (a NUL in its error text); each
// is then written alone and the good one commits: one durable commit, and a
// batch of one, as a claim or a win written alone is (committed). Found by
// review.
func TestDeliveryWrittenAloneIsABatchOfOne(t *testing.T) {
	obs := &commitLog{}
	db := testdb.New(t, store.Options{Observer: obs})
	st, ctx := db.Store, context.Background()
	ev := events(t, st, db, 2)
	obs.reset()
	now := time.Now()
	_, _, errs := st.DeliveryBatch(ctx, nil, []store.DeliveryTry{
		{EventID: ev[0], Try: 1, URL: "https://acme.example/hook", StartedAt: now, Latency: time.Millisecond, Error: "no\x00answer", Status: store.EventPending},
		{EventID: ev[1], Try: 1, URL: "https://acme.example/hook", StartedAt: now, Latency: time.Millisecond, Error: "timeout", Status: store.EventPending},
	})
	if errs[0] == nil || errs[1] != nil {
		t.Fatalf("precondition: errs %v, want the first to fail and the second to commit", errs)
	}
	obs.check(t, 1, map[string][]int{"delivery": {1}})
}
