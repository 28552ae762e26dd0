package store_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/routerhq/router/internal/store"
)

// onFirstAlone installs the store's SetOnAlone hook and returns a channel
// closed when a caller first starts running an item alone.
func onFirstAlone(t *testing.T, st *store.Store) <-chan struct{} {
	t.Helper()
	alone := make(chan struct{})
	var once sync.Once
	st.SetOnAlone(func() { once.Do(func() { close(alone) }) })
	t.Cleanup(func() { st.SetOnAlone(nil) })
	return alone
}

// A claim whose key row another transaction holds (an operator's open psql
// transaction, a replica cut off mid-transaction) waits for it alone, on its
// own caller's goroutine: meanwhile other owners' creations and other jobs'
// wins go on in their batches and commit. The held row's claim ends once
// the row is free (here: it takes over the expired key) or its own lock wait
// is over (ErrBusy), and writes nothing half-way. Before, the claim's batch
// waited the whole lock wait (a second) with every claim and win of the
// replica queued behind it, and a client that resent the request every
// second added that second to every tenant's creations and completions (found
// in review). The blocked claim's own wait is lengthened here (minutes) so
// that "meanwhile" is a fact the test observes — the claim is still waiting
// on the row, in pg_stat_activity, when the others have committed — not a
// duration it measures.
func TestHeldKeyClaimWaitsAloneWhileOthersCommit(t *testing.T) {
	b := setup(t)
	ctx := context.Background()
	guard, cancel := context.WithTimeout(ctx, hangGuard)
	defer cancel()

	// The key's first job is over and its retention has passed: the next
	// claim of the key takes it over, creating a new job.
	first, firstAtt := b.running(t, "held")
	if won, err := b.st.Complete(guard, win(first, firstAtt)); err != nil || !won {
		t.Fatalf("first job's win: won %v, err %v", won, err)
	}
	b.exec(t, `UPDATE idempotency_keys SET expires_at = now() - interval '1 second' WHERE idempotency_key = 'held'`)
	freeJob, freeAtt := b.running(t, "free-job")

	defer store.SetAloneLockWait(10 * time.Minute)()
	holder, pid := b.hold(t, `SELECT FROM idempotency_keys WHERE idempotency_key = 'held' FOR UPDATE`)

	type claimed struct {
		job     *store.Job
		created bool
		err     error
	}
	alone := onFirstAlone(t, b.st)
	blocked := make(chan claimed, 1)
	go func() {
		j, created, err := b.st.CreateJob(guard, newJob(t, "acme", "triage", "held", `{"k":"second"}`))
		blocked <- claimed{j, created, err}
	}()
	select {
	case <-alone:
	case r := <-blocked:
		t.Fatalf("the held key's claim returned (job %v, created %v, err %v) without waiting for the row alone", r.job, r.created, r.err)
	}
	b.awaitBlockedBy(t, pid) // the claim waits on the key row, alone

	// Another owner's creation and another job's win, each after the claim
	// of the held key started waiting, commit while it still waits.
	other, created, err := b.st.CreateJob(guard, newJob(t, "globex", "triage", "unrelated", `{"k":"globex"}`))
	if err != nil || !created {
		t.Fatalf("another owner's creation while a key row is held: created %v, err %v", created, err)
	}
	won, err := b.st.Complete(guard, win(freeJob, freeAtt))
	if err != nil || !won {
		t.Fatalf("another job's win while a key row is held: won %v, err %v", won, err)
	}
	select {
	case r := <-blocked:
		t.Fatalf("the held key's claim returned (job %v, created %v, err %v) before the others committed: "+
			"they waited for its batch, which gave up on the row", r.job, r.created, r.err)
	default:
	}
	if n := count(t, b, `SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND $1 = ANY (pg_blocking_pids(pid))`, pid); n != 1 {
		t.Fatalf("%d backends wait on the held key row after the others committed, want the held key's claim, still waiting", n)
	}
	if n := count(t, b, `SELECT count(*) FROM jobs WHERE id = $1`, other.ID); n != 1 {
		t.Fatal("another owner's creation was answered but its job is not stored")
	}

	// The row free, the waiting claim takes the expired key over: one new
	// job, with the key, and nothing else of it.
	if err := holder.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	r := <-blocked
	if r.err != nil || !r.created || r.job == nil || r.job.ID == first.ID {
		t.Fatalf("the held key's claim once the row is free: job %v, created %v, err %v; want a new job on the expired key", r.job, r.created, r.err)
	}
	if n := count(t, b, `SELECT count(*) FROM idempotency_keys WHERE idempotency_key = 'held' AND job_id = $1 AND expires_at IS NULL`, r.job.ID); n != 1 {
		t.Fatal("the key does not hold the claim's new job")
	}
	if n := count(t, b, `SELECT count(*) FROM jobs WHERE idempotency_key = 'held'`); n != 2 {
		t.Fatalf("%d jobs with the key, want the first and the claim's", n)
	}

	// Held past the claim's own lock wait, the claim answers ErrBusy and
	// writes nothing.
	restore := store.SetAloneLockWait(200 * time.Millisecond)
	defer restore()
	b.exec(t, `UPDATE idempotency_keys SET expires_at = now() - interval '1 second' WHERE idempotency_key = 'held'`)
	b.hold(t, `SELECT FROM idempotency_keys WHERE idempotency_key = 'held' FOR UPDATE`)
	_, _, err = b.st.CreateJob(guard, newJob(t, "acme", "triage", "held", `{"k":"third"}`))
	var busy *store.BusyError
	if !errors.As(err, &busy) || !errors.Is(err, store.ErrBusy) || !strings.Contains(err.Error(), `"held"`) || busy.Wait != 200*time.Millisecond {
		t.Fatalf("claim of a key held past its lock wait: err %v; want a BusyError naming the key and the claim's own wait", err)
	}
	if n := count(t, b, `SELECT count(*) FROM jobs WHERE idempotency_key = 'held'`); n != 2 {
		t.Fatalf("%d jobs with the key after a busy claim, want still 2", n)
	}
}

// A webhook delivery write whose event row another transaction holds waits
// for it alone, on its caller's goroutine, while other events' writes go on
// in their batches; once the row is free it is carried out. Before, its
// batch, and every delivery write queued behind it, waited the whole lock
// wait, and then the write's rerun alone inside the batch waited it again.
func TestHeldEventRowWriteWaitsAloneWhileOthersCommit(t *testing.T) {
	b := setup(t)
	ctx := context.Background()
	guard, cancel := context.WithTimeout(ctx, hangGuard)
	defer cancel()
	ev := events(t, b.st, b.db, 2)
	try := func(id string) store.DeliveryTry {
		return store.DeliveryTry{EventID: id, Try: 1, URL: "https://acme.example/hook", StartedAt: time.Now(),
			StatusCode: 204, Status: store.EventDelivered}
	}

	defer store.SetAloneLockWait(10 * time.Minute)()
	holder, pid := b.hold(t, `SELECT 1 FROM job_events WHERE id = $1 FOR UPDATE`, ev[0])
	type recorded struct {
		status string
		err    error
	}
	alone := onFirstAlone(t, b.st)
	blocked := make(chan recorded, 1)
	go func() {
		status, err := b.st.RecordDelivery(guard, try(ev[0]))
		blocked <- recorded{status, err}
	}()
	select {
	case <-alone:
	case r := <-blocked:
		t.Fatalf("the held event's write returned (status %q, err %v) without waiting for the row alone", r.status, r.err)
	}
	b.awaitBlockedBy(t, pid) // the write waits on the event row, alone

	if status, err := b.st.RecordDelivery(guard, try(ev[1])); err != nil || status != store.EventDelivered {
		t.Fatalf("another event's try while an event row is held: status %q, err %v", status, err)
	}
	select {
	case r := <-blocked:
		t.Fatalf("the held event's write returned (status %q, err %v) before another event's write committed: "+
			"that one waited for its batch, which gave up on the row", r.status, r.err)
	default:
	}
	if n := count(t, b, `SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND $1 = ANY (pg_blocking_pids(pid))`, pid); n != 1 {
		t.Fatalf("%d backends wait on the held event row after the other write committed, want the held event's write, still waiting", n)
	}

	if err := holder.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	if r := <-blocked; r.err != nil || r.status != store.EventDelivered {
		t.Fatalf("the held event's try once the row is free: status %q, err %v; want it recorded", r.status, r.err)
	}
	for _, id := range ev {
		if n := count(t, b, `SELECT count(*) FROM webhook_deliveries WHERE event_id = $1`, id); n != 1 {
			t.Errorf("event %s has %d recorded tries, want 1", id, n)
		}
	}
}

// A client told 503 busy sends its request again, every second or so, for as
// long as the key's row stays held: those resends are claimed alone at once,
// without entering (and holding up) a batch of other callers' claims and
// wins first. Once a claim of the key gets past the row, its claims go
// through the batches again.
func TestHeldKeyResendsGoAloneAtOnce(t *testing.T) {
	b := setup(t)
	ctx := context.Background()
	guard, cancel := context.WithTimeout(ctx, hangGuard)
	defer cancel()
	first, _, err := b.st.CreateJob(guard, newJob(t, "acme", "triage", "held", `{"k":"held"}`))
	if err != nil {
		t.Fatal(err)
	}
	defer store.SetAloneLockWait(200 * time.Millisecond)()
	holder, _ := b.hold(t, `SELECT FROM idempotency_keys WHERE idempotency_key = 'held' FOR UPDATE`)
	var batched atomic.Int64 // claims that came to a batch
	b.st.SetBeforePathEnqueue(func() { batched.Add(1) })
	defer b.st.SetBeforePathEnqueue(nil)

	claim := func(key string) (*store.Job, bool, error) {
		return b.st.CreateJob(guard, newJob(t, "acme", "triage", key, `{"k":"`+key+`"}`))
	}
	for i, want := range []int64{1, 1, 1} {
		if _, _, err := claim("held"); !errors.Is(err, store.ErrBusy) {
			t.Fatalf("claim %d of the held key: err %v, want ErrBusy", i+1, err)
		}
		if n := batched.Load(); n != want {
			t.Fatalf("after claim %d of the held key, %d claims came to a batch, want %d: "+
				"only the first, which found the row held, may hold up a batch", i+1, n, want)
		}
	}
	if _, created, err := claim("other"); err != nil || !created || batched.Load() != 2 {
		t.Fatalf("another key's claim: created %v, err %v, %d batched claims; want it created through a batch", created, err, batched.Load())
	}

	if err := holder.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	if j, created, err := claim("held"); err != nil || created || j.ID != first.ID || batched.Load() != 2 {
		t.Fatalf("the held key's claim once the row is free: %v created %v, err %v, %d batched claims; "+
			"want the existing job %s, claimed alone", j, created, err, batched.Load(), first.ID)
	}
	if j, _, err := claim("held"); err != nil || j.ID != first.ID || batched.Load() != 3 {
		t.Fatalf("the next claim of the formerly held key: %v, err %v, %d batched claims; want the existing job, through a batch again", j, err, batched.Load())
	}
}
