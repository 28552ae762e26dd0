package maintenance_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/routerhq/router/internal/maintenance"
	"github.com/routerhq/router/internal/store"
	"github.com/routerhq/router/internal/testdb"
)

const confDay = 24 * time.Hour

// confRun stores a conformance run of p1 on triage@version with model that
// finished ago before the database's now, after a minute's run; it returns
// its id. Runs are stored oldest first, as the router numbers them.
func (g rig) confRun(t *testing.T, model, version string, passed bool, ago time.Duration) int64 {
	t.Helper()
	var id int64
	if err := g.db.Pool.QueryRow(context.Background(), `
		INSERT INTO conformance_runs (provider, model, prompt, prompt_version, passed, cases_total, cases_passed,
			router_version, started_at, finished_at, prompt_digest, target_digest)
		VALUES ('p1', $1, 'triage', $2, $3, 8, CASE WHEN $3 THEN 8 ELSE 6 END, 'test',
			now() - $4::bigint * interval '1 microsecond' - interval '1 minute', now() - $4::bigint * interval '1 microsecond',
			repeat('a', 64), repeat('b', 64))
		RETURNING id`, model, version, passed, ago.Microseconds()).Scan(&id); err != nil {
		t.Fatal(err)
	}
	return id
}

func (g rig) confLeft(t *testing.T, ids ...int64) int {
	t.Helper()
	return g.count(t, `SELECT count(*) FROM conformance_runs WHERE id = ANY($1)`, ids)
}

// confObserved records the conformance runs the cleaner reports deleted.
type confObserved struct {
	mu      sync.Mutex
	deleted int
	batches chan int
}

func (o *confObserved) RetentionDeleted(int) {}
func (o *confObserved) RetentionPassFailed() {}
func (o *confObserved) ConformanceRunsDeleted(n int) {
	o.mu.Lock()
	o.deleted += n
	o.mu.Unlock()
	if o.batches != nil {
		o.batches <- n
	}
}

// The leader's retention pass deletes the conformance runs that finished
// longer ago than retention.conformance_runs, keeping each group's latest
// run and latest pass, and reports how many it deleted; with the setting at
// 0s, or on a replica that does not lead, it deletes none.
func TestCleanerDeletesOldConformanceRuns(t *testing.T) {
	db := testdb.New(t, store.Options{KeyRetention: time.Hour})
	g := rig{db: db, st: db.Store}
	ctx := context.Background()
	old := []int64{
		g.confRun(t, "m1", "1", true, 100*confDay),
		g.confRun(t, "m1", "1", false, 95*confDay),
		g.confRun(t, "m1", "2", false, 92*confDay),
	}
	lastPass := g.confRun(t, "m1", "1", true, 91*confDay)
	old = append(old, g.confRun(t, "m1", "1", false, 90*confDay))
	latest2 := g.confRun(t, "m1", "2", false, 80*confDay)
	young := g.confRun(t, "m1", "1", false, 10*confDay)
	kept := []int64{lastPass, latest2, young}
	all := append(append([]int64{}, old...), kept...)

	for _, c := range []*maintenance.Cleaner{
		{Store: g.st, Batch: 2},
		{Store: g.st, Batch: 2, ConformanceAfter: 30 * confDay, Leader: notLeader{}},
	} {
		if n, err := c.ConformanceOnce(ctx); err != nil || n != 0 {
			t.Fatalf("conformance_runs %s, leader %v: deleted %d (%v), want none", c.ConformanceAfter, c.Leader, n, err)
		}
	}
	if n := g.confLeft(t, all...); n != len(all) {
		t.Fatalf("%d of %d runs left, want all", n, len(all))
	}

	o := &confObserved{}
	c := &maintenance.Cleaner{Store: g.st, Batch: 2, ConformanceAfter: 30 * confDay, Observer: o}
	n, err := c.ConformanceOnce(ctx)
	if err != nil || n != len(old) {
		t.Fatalf("deleted %d (%v), want the %d old runs", n, err, len(old))
	}
	if left := g.confLeft(t, old...); left != 0 {
		t.Errorf("%d old runs left", left)
	}
	if left := g.confLeft(t, kept...); left != len(kept) {
		t.Errorf("%d of the %d runs to keep (a group's latest pass, another's latest run, a young run) left", left, len(kept))
	}
	if o.deleted != len(old) {
		t.Errorf("the observer was told of %d runs deleted, want %d", o.deleted, len(old))
	}
}

// Run deletes old conformance runs on each pass, and tells the observer.
func TestCleanerRunDeletesOldConformanceRuns(t *testing.T) {
	db := testdb.New(t, store.Options{KeyRetention: time.Hour})
	g := rig{db: db, st: db.Store}
	oldest := g.confRun(t, "m1", "1", false, 100*confDay)
	latest := g.confRun(t, "m1", "1", false, 90*confDay)
	o := &confObserved{batches: make(chan int, 1)}
	c := &maintenance.Cleaner{Store: g.st, Interval: time.Hour, ConformanceAfter: 30 * confDay, Observer: o}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); c.Run(ctx) }()
	n := <-o.batches
	cancel()
	<-done
	if n != 1 || g.confLeft(t, oldest) != 0 || g.confLeft(t, latest) != 1 {
		t.Fatalf("Run deleted %d runs (oldest left: %d, latest left: %d), want the oldest only", n, g.confLeft(t, oldest), g.confLeft(t, latest))
	}
}

// A pass over a backlog of old runs stops after its bound of batches, and
// the next goes on from there.
func TestCleanerConformancePassIsBounded(t *testing.T) {
	db := testdb.New(t, store.Options{KeyRetention: time.Hour})
	g := rig{db: db, st: db.Store}
	g.exec(t, `
		INSERT INTO conformance_runs (provider, model, prompt, prompt_version, passed, cases_total, cases_passed,
			router_version, started_at, finished_at, prompt_digest, target_digest)
		SELECT 'p1', 'm1', 'triage', '1', false, 8, 6, 'test', now() - interval '100 days' + i * interval '1 minute' - interval '1 second',
			now() - interval '100 days' + i * interval '1 minute', repeat('a', 64), repeat('b', 64)
		FROM generate_series(1, 150) i`)
	latest := g.confRun(t, "m1", "1", false, confDay)
	c := &maintenance.Cleaner{Store: g.st, Batch: 1, ConformanceAfter: 30 * confDay}
	for i, want := range []int{100, 50, 0} {
		if n, err := c.ConformanceOnce(context.Background()); err != nil || n != want {
			t.Fatalf("pass %d deleted %d (%v), want %d", i, n, err, want)
		}
	}
	if g.confLeft(t, latest) != 1 {
		t.Fatal("the latest run was deleted")
	}
}
