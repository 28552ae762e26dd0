package store_test

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/routerhq/router/internal/store"
	"github.com/routerhq/router/internal/testdb"
)

// Issue 11: one batch holding a key already bound to another request, the same
// new key twice (once as a different request), and a fresh key answers each
// caller as CreateJob alone would: 409, one job shared by the duplicates, the
// conflicting duplicate refused, the fresh key created with its first attempt.
func TestClaimBatchAnswersEachCaller(t *testing.T) {
	b := setup(t)
	ctx := context.Background()
	held, created, err := b.st.CreateJob(ctx, newJob(t, "acme", "triage", "held", `{"n":1}`))
	if err != nil || !created {
		t.Fatalf("seed: %v %v", created, err)
	}
	first := &store.FirstAttempt{Provider: "p1", Model: "m1", Role: store.RolePrimary, Routing: []byte(`[{"provider":"p1","eligible":true}]`)}
	fresh := newJob(t, "acme", "triage", "fresh", `{"n":3}`)
	fresh.First, fresh.LeaseOwner, fresh.LeaseFor = first, "replica-a", time.Minute
	dup := newJob(t, "acme", "triage", "dup", `{"n":2}`)
	jobs, createdFlags, errs := b.st.ClaimOneBatch(ctx, []store.NewJob{
		newJob(t, "acme", "triage", "held", `{"n":99}`), // live key, other request
		dup,
		fresh,
		dup, // same key and request again
		newJob(t, "acme", "triage", "dup", `{"n":42}`), // same key, other request
		newJob(t, "acme", "triage", "held", `{"n":1}`), // the held key's own request
	})
	if !errors.Is(errs[0], store.ErrKeyReused) {
		t.Errorf("conflicting key: err=%v, want ErrKeyReused", errs[0])
	}
	if errs[1] != nil || !createdFlags[1] {
		t.Fatalf("first of the duplicates: created=%v err=%v", createdFlags[1], errs[1])
	}
	if errs[3] != nil || createdFlags[3] || jobs[3].ID != jobs[1].ID {
		t.Errorf("second of the duplicates: created=%v err=%v job=%v, want job %s", createdFlags[3], errs[3], jobs[3], jobs[1].ID)
	}
	if !errors.Is(errs[4], store.ErrKeyReused) {
		t.Errorf("duplicate key with another request: err=%v, want ErrKeyReused", errs[4])
	}
	if errs[5] != nil || createdFlags[5] || jobs[5].ID != held.ID {
		t.Errorf("replay of the held key: created=%v err=%v", createdFlags[5], errs[5])
	}
	if errs[2] != nil || !createdFlags[2] || jobs[2].State != store.JobRunning || len(jobs[2].Attempts) != 1 {
		t.Fatalf("fresh key: created=%v err=%v job=%+v", createdFlags[2], errs[2], jobs[2])
	}
	// What the callers were told is what the database holds.
	if n := count(t, b, `SELECT count(*) FROM jobs`); n != 3 {
		t.Errorf("jobs = %d, want 3 (held, dup, fresh)", n)
	}
	got, err := b.st.GetJobAny(ctx, jobs[2].ID)
	if err != nil {
		t.Fatal(err)
	}
	a := got.Attempts
	if got.State != store.JobRunning || len(a) != 1 || a[0].ID != jobs[2].Attempts[0].ID || a[0].State != store.AttemptRunning ||
		a[0].Provider != "p1" || a[0].ReadVersion != got.Version || a[0].LeaseOwner == nil || *a[0].LeaseOwner != "replica-a" {
		t.Errorf("fresh job as stored: %+v attempts %+v", got, a)
	}
	if string(got.Routing) == "" {
		t.Errorf("routing not recorded with the claim")
	}
	if n := count(t, b, `SELECT count(*) FROM attempts`); n != 1 {
		t.Errorf("attempts = %d, want only the fresh job's first", n)
	}
}

// Issue 11: callers are told of a claim only after its batch committed, so a
// process that dies between the commit and telling them loses no job it
// acknowledged; the caller's retry with the same key, on another replica,
// finds the job the batch created, and nothing is created twice.
func TestClaimCommitsBeforeAnyCallerIsTold(t *testing.T) {
	b := setup(t)
	ctx := context.Background()
	committed := make(chan string, 1)
	never := make(chan struct{}) // the "dead" process never tells its callers
	b.st.SetAfterClaimCommit(func(key string) {
		committed <- key
		<-never
	})
	t.Cleanup(func() { close(never) })
	told := make(chan error, 1)
	go func() {
		_, _, err := b.st.CreateJob(ctx, newJob(t, "acme", "triage", "crash-key", `{"n":1}`))
		told <- err
	}()
	<-committed
	select {
	case err := <-told:
		t.Fatalf("the caller was answered before the hook returned: %v", err)
	default:
	}
	// Visible to everyone else already: it is durable before any answer.
	if n := count(t, b, `SELECT count(*) FROM jobs WHERE idempotency_key = 'crash-key'`); n != 1 {
		t.Fatalf("jobs after commit = %d, want 1", n)
	}
	other := store.New(b.db.Pool, store.Options{})
	j, created, err := other.CreateJob(ctx, newJob(t, "acme", "triage", "crash-key", `{"n":1}`))
	if err != nil || created {
		t.Fatalf("retry on another replica: created=%v err=%v", created, err)
	}
	var id string
	if err := b.db.Pool.QueryRow(ctx, `SELECT id::text FROM jobs WHERE idempotency_key = 'crash-key'`).Scan(&id); err != nil || id != j.ID {
		t.Fatalf("retry found %s, stored %s (%v)", j.ID, id, err)
	}
}

// Concurrent CreateJob calls are carried by fewer statements than calls, and
// each caller still gets its own job.
func TestConcurrentClaimsShareBatches(t *testing.T) {
	db := testdb.New(t, store.Options{})
	obs := &countingObserver{}
	st := store.New(db.Pool, store.Options{Observer: obs})
	ctx := context.Background()
	const n = 64
	ids := make(chan string, n)
	start := make(chan struct{})
	for i := range n {
		go func() {
			<-start
			j, created, err := st.CreateJob(ctx, newJob(t, "acme", "triage", "k"+itoa(i), `{"i":`+itoa(i)+`}`))
			if err != nil || !created {
				t.Errorf("claim %d: created=%v err=%v", i, created, err)
				ids <- ""
				return
			}
			ids <- j.ID
		}()
	}
	close(start)
	seen := map[string]bool{}
	for range n {
		seen[<-ids] = true
	}
	if len(seen) != n {
		t.Fatalf("distinct jobs = %d, want %d", len(seen), n)
	}
	items, batches := obs.totals()
	if items != n || batches < 1 || batches > n {
		t.Fatalf("observer saw %d claims in %d batches", items, batches)
	}
	t.Logf("%d claims in %d batches", items, batches)
}

type countingObserver struct {
	mu             sync.Mutex
	items, batches int
}

func (o *countingObserver) DurableCommit() {}
func (o *countingObserver) Batch(kind string, size int) {
	if kind != "claim" {
		return
	}
	o.mu.Lock()
	o.items += size
	o.batches++
	o.mu.Unlock()
}
func (o *countingObserver) totals() (int, int) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.items, o.batches
}

func itoa(i int) string { return strconv.Itoa(i) }
