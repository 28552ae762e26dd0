package race_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/routerhq/router/internal/maintenance"
	"github.com/routerhq/router/internal/race"
	"github.com/routerhq/router/internal/racetest"
	"github.com/routerhq/router/internal/store"
)

// deadOrphans counts the open jobs still held by the dead orchestrator of
// recoveryRig.orphan: the orphans no pass has adopted.
func (g *recoveryRig) deadOrphans(t *testing.T) int {
	t.Helper()
	var n int
	if err := g.rb.DB.Pool.QueryRow(context.Background(),
		`SELECT count(*) FROM jobs WHERE lease_owner = 'dead' AND state IN ('pending', 'running')`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// docs/operations.md (shutdown, step 5): a job a draining replica hands over
// is claimed on the next recovery pass. A drain that runs out, or a crash,
// hands over every job of a replica at once; a pass claimed one batch (20)
// of them, so with 200 the last waited some ten passes (~100 s) while its
// callers waited on a pending job. One pass claims batch after batch while
// they come back full.
func TestOnePassAdoptsEveryOrphan(t *testing.T) {
	g := newRecoveryRig(t)
	close(g.slow.release)
	const n = 45
	jobs := make([]*store.Job, n)
	for i := range jobs {
		jobs[i] = g.orphan(t)
	}
	g.r.RecoverOnce(context.Background(), 20)
	if left := g.deadOrphans(t); left != 0 {
		t.Fatalf("one recovery pass left %d of %d orphans for later passes", left, n)
	}
	for _, j := range jobs {
		if s := g.rb.WaitSettled(t, j.ID).State; s != store.JobSucceeded {
			t.Fatalf("adopted orphan %s ended %s", j.ID, s)
		}
	}
}

// A pass's claims are bounded (maxAdoptBatches, 50): the orphans beyond them
// wait for the next pass instead of one pass going on for as long as
// orphans keep coming.
func TestOnePassAdoptsABoundedNumberOfOrphans(t *testing.T) {
	g := newRecoveryRig(t)
	close(g.slow.release)
	const n, bound = 53, 50 // batches of one
	for range n {
		g.orphan(t)
	}
	g.r.RecoverOnce(context.Background(), 1)
	if left := g.deadOrphans(t); left != n-bound {
		t.Fatalf("one pass with batches of one left %d of %d orphans, want %d (it claims %d batches at most)", left, n, n-bound, bound)
	}
	g.r.RecoverOnce(context.Background(), 1)
	if left := g.deadOrphans(t); left != 0 {
		t.Fatalf("the next pass left %d orphans", left)
	}
}

// The elector the server gives RunRecovery signals its gains of the lead.
var _ race.LeadGains = (*maintenance.Elector)(nil)

// askedElector is an Elector whose IsLeader answers are reported on asked
// (when there is room); Gained is the Elector's.
type askedElector struct {
	*maintenance.Elector
	asked chan bool
}

func (a askedElector) IsLeader() bool {
	l := a.Elector.IsLeader()
	select {
	case a.asked <- l:
	default:
	}
	return l
}

// docs/operations.md (shutdown, step 5): a draining leader steps down at
// once, and another replica leads — and adopts the jobs it hands over —
// within a third of retention.leader_lease. The new leader's elector took the
// lease in time, but its recovery looked only on its own ticker (a third of
// execution.lease): it adopted them up to that much later. Here the ticker
// never fires (an hour): only the gain of the lead can start the pass that
// adopts the job.
func TestNewLeaderAdoptsHandedOverJobsAsItGainsTheLead(t *testing.T) {
	b := racetest.New(t, racetest.Options{LeaseOwner: "replica-b",
		Providers: []racetest.Provider{{Name: "primary", Respond: racetest.OK(validTriage)}}})
	ctx := context.Background()
	// replica-a holds the lease for an hour: replica-b leads only once it
	// steps down.
	a := maintenance.NewElector(b.Store, "maintenance", "replica-a", time.Hour, nil)
	if !a.Once(ctx) {
		t.Fatal("replica-a could not lead")
	}
	eb := maintenance.NewElector(b.Store, "maintenance", "replica-b", 300*time.Millisecond, nil)
	leader := askedElector{Elector: eb, asked: make(chan bool, 1)}
	rctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() { eb.Run(rctx) })
	wg.Go(func() { b.Runner.RunRecovery(rctx, race.RecoveryConfig{Leader: leader, Interval: time.Hour}) })
	defer func() { cancel(); wg.Wait() }()
	if <-leader.asked { // replica-b's first pass: a follower's
		t.Fatal("replica-b leads while replica-a holds the lease")
	}
	// replica-a drains: it hands a job over (a follower leaves it to the
	// leader for a lease) and steps down.
	job := b.Create(t, "replica-a")
	if err := b.Store.ReleaseJobLease(ctx, job.ID, "replica-a"); err != nil {
		t.Fatal(err)
	}
	if err := a.StepDown(ctx); err != nil {
		t.Fatal(err)
	}
	if j := b.WaitSettled(t, job.ID); j.State != store.JobSucceeded {
		t.Fatalf("the handed-over job ended %s", j.State)
	}
}
