package maintenance_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/routerhq/router/internal/maintenance"
	"github.com/routerhq/router/internal/store"
	"github.com/routerhq/router/internal/testdb"
)

// leadFor leads for the first n times it is asked, then no more.
type leadFor struct{ n, asked atomic.Int32 }

func (l *leadFor) IsLeader() bool { return l.asked.Add(1) <= l.n.Load() }

// A pass stops as soon as this replica no longer leads, between batches:
// another replica may lead by then, and run its own pass.
func TestCleanerStopsWhenTheLeadIsLostMidPass(t *testing.T) {
	db := testdb.New(t, store.Options{KeyRetention: time.Hour})
	g := rig{db: db, st: db.Store}
	ctx := context.Background()
	if err := g.st.SyncConfigWebhooks(ctx, map[string]string{"acme": "http://example.invalid/hook"}); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"old-1", "old-2", "old-3"} {
		g.age(t, g.succeeded(t, k).ID, 721*time.Hour)
	}
	l := &leadFor{}
	l.n.Store(1)
	c := &maintenance.Cleaner{Store: g.st, After: 720 * time.Hour, Batch: 1, Leader: l}
	if n, err := c.Once(ctx); err != nil || n != 1 {
		t.Fatalf("deleted %d (err %v); want 1: the lead was lost after the first batch", n, err)
	}
	if left := g.count(t, `SELECT count(*) FROM jobs`); left != 2 {
		t.Fatalf("%d jobs left, want the 2 the pass had not reached when the lead was lost", left)
	}
}
