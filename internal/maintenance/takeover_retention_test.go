package maintenance_test

import (
	"context"
	"testing"
	"time"

	"github.com/routerhq/router/internal/maintenance"
	"github.com/routerhq/router/internal/store"
	"github.com/routerhq/router/internal/testdb"
)

// deletions signals (without blocking) each batch the cleaner deleted.
type deletions chan struct{}

func (d deletions) RetentionDeleted(int) {
	select {
	case d <- struct{}{}:
	default:
	}
}

func (d deletions) RetentionPassFailed() {}

// takeoverRig: replica a leads the maintenance lease (lease 3s); replica b,
// started as internal/server starts it (its elector running, then its
// cleaner), does not. A job is past retention. The cleaner's Interval is an
// hour, so its own tick never comes during the test: only the gain of the
// lead can start b's pass.
func takeoverRig(t *testing.T) (g rig, a *maintenance.Elector, old *store.Job, deleted deletions, ctx context.Context) {
	t.Helper()
	db := testdb.New(t, store.Options{KeyRetention: time.Hour})
	g = rig{db: db, st: db.Store}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	if err := g.st.SyncConfigWebhooks(ctx, map[string]string{"acme": "http://example.invalid/hook"}); err != nil {
		t.Fatal(err)
	}
	old = g.succeeded(t, "old-1")
	g.age(t, old.ID, 721*time.Hour)

	const lease = 3 * time.Second
	a = maintenance.NewElector(db.Store, "maintenance", "replica-a", lease, nil)
	if !a.Once(ctx) {
		t.Fatal("replica a did not lead")
	}
	b := maintenance.NewElector(db.Store, "maintenance", "replica-b", lease, nil)
	if b.Once(ctx) {
		t.Fatal("replica b led while replica a held the lease")
	}
	go b.Run(ctx)
	deleted = make(deletions, 1)
	c := &maintenance.Cleaner{Store: g.st, Leader: b, After: 720 * time.Hour, Interval: time.Hour, Observer: deleted}
	go c.Run(ctx)
	return g, a, old, deleted, ctx
}

// waitDeleted waits for the cleaner's deletion of old. The bound is not a
// measure of speed: it only ends a test that would otherwise wait for the
// cleaner's next tick, an hour away.
func waitDeleted(t *testing.T, g rig, old *store.Job, deleted deletions, why string) {
	t.Helper()
	const bound = time.Minute
	select {
	case <-deleted:
	case <-time.After(bound):
		t.Fatalf("%s, yet %s later the job past retention is still there: the new leader's retention waits for its cleaner's next tick, not for the gain of the lead", why, bound)
	}
	if n := g.count(t, `SELECT count(*) FROM jobs WHERE id = $1`, old.ID); n != 0 {
		t.Fatalf("the cleaner reported a deletion, but the job past retention is still there")
	}
}

// docs/configuration.md (retention.leader_lease): "when the leader dies
// another replica takes over recovery, reconciliation and retention within
// it". The leader dies (renews no more); the other replica's elector takes
// the lease once it expires, and its cleaner runs a pass at once.
func TestNewLeaderRetentionWithinTheLease(t *testing.T) {
	g, _, old, deleted, _ := takeoverRig(t)
	// replica a renews no more from here on.
	waitDeleted(t, g, old, deleted, "replica a died")
}

// A draining leader steps down (SPEC §17): the other replica leads from its
// elector's next try, and its retention (and its ending of removed webhooks)
// starts then too, as its recovery does.
func TestStepDownRetentionAtOnce(t *testing.T) {
	g, a, old, deleted, ctx := takeoverRig(t)
	if err := a.StepDown(ctx); err != nil {
		t.Fatal(err)
	}
	waitDeleted(t, g, old, deleted, "replica a stepped down")
}
