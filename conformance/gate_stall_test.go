package conformance

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/routerhq/router/internal/prompt"
	"github.com/routerhq/router/internal/store"
	"github.com/routerhq/router/internal/testdb"
)

// stallFixture is a gate over a database whose conformance_runs table a test
// can lock (as ALTER TABLE, REINDEX or VACUUM FULL do), with a pass of
// fb × m on triage@2 recorded. Every read the gate makes is announced on
// reads, with a function that fails it (what the gate's readTimeout does to a
// read the lock holds); every decision that waits for a read already in
// flight is announced on joins. The gate's clock stands still until the test
// moves it.
type stallFixture struct {
	t     *testing.T
	db    *testdb.DB
	g     *Gate
	p     *prompt.Prompt
	reads chan context.CancelFunc
	joins chan struct{}
	clock atomic.Int64 // nanoseconds past base
	ended atomic.Int32 // reads that ended
}

type decision struct {
	ok  bool
	why string
}

func newStallFixture(t *testing.T, cacheFor time.Duration) *stallFixture {
	t.Helper()
	db := testdb.New(t, store.Options{})
	if _, err := db.Store.RecordConformanceRun(context.Background(), store.NewConformanceRun{Provider: "fb", Model: "m",
		Prompt: "triage", PromptVersion: "2", Passed: true, CasesTotal: 1, CasesPassed: 1, PromptDigest: strings.Repeat("a", 64), TargetDigest: strings.Repeat("b", 64)}); err != nil {
		t.Fatal(err)
	}
	fx := &stallFixture{t: t, db: db, p: &prompt.Prompt{Name: "triage", Version: "2", Model: "m"},
		reads: make(chan context.CancelFunc, 64), joins: make(chan struct{}, 64)}
	base := time.Now()
	g := NewGate(db.Store, GateFallbacks, time.Hour, CacheFor(cacheFor))
	g.now = func() time.Time { return base.Add(time.Duration(fx.clock.Load())) }
	g.readTimeout = time.Minute // a read the lock holds ends when the test fails it
	g.read = func(ctx context.Context, provider, model, name, version string, maxAge time.Duration) (*store.ConformanceStanding, error) {
		rctx, cancel := context.WithCancel(ctx)
		defer cancel()
		fx.reads <- cancel
		defer fx.ended.Add(1)
		return db.Store.ConformanceStandingOf(rctx, provider, model, name, version, maxAge)
	}
	g.joined = func() { fx.joins <- struct{}{} }
	fx.g = g
	return fx
}

// lockRuns holds an ACCESS EXCLUSIVE lock on conformance_runs until the
// returned function (or the end of the test) releases it.
func (fx *stallFixture) lockRuns() (release func()) {
	fx.t.Helper()
	ctx := context.Background()
	tx, err := fx.db.Pool.Begin(ctx)
	if err != nil {
		fx.t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, "LOCK TABLE conformance_runs IN ACCESS EXCLUSIVE MODE"); err != nil {
		fx.t.Fatal(err)
	}
	release = func() { _ = tx.Rollback(ctx) }
	fx.t.Cleanup(release)
	return release
}

// start asks the gate in the background.
func (fx *stallFixture) start(ctx context.Context) <-chan decision {
	out := make(chan decision, 1)
	go func() {
		ok, why := fx.g.AllowModel(ctx, "fb", "", fx.p, store.RoleFailover)
		out <- decision{ok, why}
	}()
	return out
}

// decideLocked asks the gate while the table is locked: a read it makes is
// failed at once. read says whether it read.
func (fx *stallFixture) decideLocked() (d decision, read bool) {
	res := fx.start(context.Background())
	select {
	case d = <-res:
		return d, false
	case fail := <-fx.reads:
		fail()
		return <-res, true
	}
}

// readsSince drains the reads announced and counts them.
func (fx *stallFixture) readsSince() int {
	n := 0
	for {
		select {
		case <-fx.reads:
			n++
		default:
			return n
		}
	}
}

const unreadable = "cannot read conformance results for triage@2 ("

// Concurrent decisions on the same standing while the table is locked make
// one database read, and all refuse with its error; the decisions that follow
// within the failure window refuse at once without reading, even once the
// lock is gone; after the window a read admits again.
func TestGateCoalescesAndCachesAFailedRead(t *testing.T) {
	fx := newStallFixture(t, time.Hour)
	release := fx.lockRuns()
	const n = 8
	var results []<-chan decision
	for range n {
		results = append(results, fx.start(context.Background()))
	}
	failFirst := <-fx.reads
	for joins := 0; joins < n-1; {
		select {
		case <-fx.joins:
			joins++
		case failSecond := <-fx.reads:
			failSecond()
			failFirst()
			release()
			for _, r := range results {
				<-r
			}
			t.Fatalf("a second read of the same standing started while one was in flight (%d decisions had joined it)", joins)
		}
	}
	// The read times out: readTimeout after it started. The refusal is
	// reused for a while from then, not from when the read started.
	fx.clock.Add(int64(readTimeout))
	failFirst()
	var why string
	for i, r := range results {
		d := <-r
		if d.ok || !strings.HasPrefix(d.why, unreadable) {
			t.Fatalf("decision %d on an unreadable table: %v %q", i, d.ok, d.why)
		}
		if i == 0 {
			why = d.why
		} else if d.why != why {
			t.Fatalf("decision %d: reason %q, decision 0: %q", i, d.why, why)
		}
	}
	if extra := fx.readsSince(); extra != 0 {
		t.Fatalf("%d decisions made %d reads", n, 1+extra)
	}

	// Right after the failed read: refused at once, with the same reason.
	if d, read := fx.decideLocked(); read || d.ok || d.why != why {
		t.Fatalf("right after a failed read: read %v, decision %v %q (want the cached refusal %q)", read, d.ok, d.why, why)
	}
	release()
	fx.clock.Add(int64(failureCacheFor - 1))
	if ok, w := fx.g.AllowModel(context.Background(), "fb", "", fx.p, store.RoleFailover); ok || w != why || fx.readsSince() != 0 {
		t.Fatalf("within the failure window, the lock released: %v %q", ok, w)
	}
	// After the window, a successful read replaces the refusal.
	fx.clock.Add(1)
	if ok, w := fx.g.AllowModel(context.Background(), "fb", "", fx.p, store.RoleFailover); !ok {
		t.Fatalf("after the failure window, the lock released: refused: %s", w)
	}
	if reads := fx.readsSince(); reads != 1 {
		t.Fatalf("after the failure window: %d reads, want 1", reads)
	}
}

// A decision waiting for a read in flight gives up when its own context ends,
// and the read goes on for the others: the context of the decision that
// started it included.
func TestGateWaitersKeepTheirOwnContext(t *testing.T) {
	fx := newStallFixture(t, time.Hour)
	release := fx.lockRuns()
	joined := func() {
		t.Helper()
		select {
		case <-fx.joins:
		case fail := <-fx.reads:
			fail()
			release()
			t.Fatal("a second read of the same standing started while one was in flight")
		}
	}
	leaderCtx, cancelLeader := context.WithCancel(context.Background())
	defer cancelLeader()
	leader := fx.start(leaderCtx)
	<-fx.reads // the read is in flight, held by the lock
	waiterCtx, cancelWaiter := context.WithCancel(context.Background())
	defer cancelWaiter()
	waiter := fx.start(waiterCtx)
	joined()
	other := fx.start(context.Background())
	joined()

	cancelWaiter()
	if d := <-waiter; d.ok || d.why != unreadable+"context canceled)" {
		t.Fatalf("a waiter whose context ended: %v %q", d.ok, d.why)
	}
	if fx.ended.Load() != 0 {
		t.Fatal("a waiter whose context ended waited for the read to end")
	}
	cancelLeader()
	if d := <-leader; d.ok || d.why != unreadable+"context canceled)" {
		t.Fatalf("the decision that started the read, its context ended: %v %q", d.ok, d.why)
	}
	select {
	case d := <-other:
		t.Fatalf("a waiter returned before the read ended: %v %q", d.ok, d.why)
	default:
	}
	release()
	if d := <-other; !d.ok {
		t.Fatalf("the read went on after its starter gave up, and refused: %q", d.why)
	}
	if extra := fx.readsSince(); extra != 0 {
		t.Fatalf("%d reads, want 1", 1+extra)
	}
}

// With CacheFor(0) nothing is reused: not even a failed read.
func TestGateCachesNoFailureWithoutACache(t *testing.T) {
	fx := newStallFixture(t, 0)
	release := fx.lockRuns()
	if d, read := fx.decideLocked(); !read || d.ok || !strings.HasPrefix(d.why, unreadable) {
		t.Fatalf("locked table: read %v, decision %v %q", read, d.ok, d.why)
	}
	release()
	if ok, why := fx.g.AllowModel(context.Background(), "fb", "", fx.p, store.RoleFailover); !ok || fx.readsSince() != 1 {
		t.Fatalf("after the lock, with no cache: %v %q", ok, why)
	}
}
