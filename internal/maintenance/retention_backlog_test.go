package maintenance_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/routerhq/router/internal/maintenance"
	"github.com/routerhq/router/internal/store"
)

// backlogStore is a RetentionStore with a backlog of expired jobs larger than
// the test cares to count: every batch deletes a full batch and the walk is
// never done. It also ends removed webhooks (the optional capability the
// Cleaner finds by type assertion), and says when each first happened.
type backlogStore struct {
	mu       sync.Mutex
	batches  int
	long     chan struct{} // closed at the backlog's 10,000th batch (a million jobs at 100 a batch)
	expired  chan struct{} // closed at the first ExpireRemovedWebhooks
	expOnce  sync.Once
	longOnce sync.Once
}

func (b *backlogStore) DeleteExpiredJobsFrom(ctx context.Context, after time.Duration, batch int, from store.RetentionCursor) (int, []string, store.RetentionCursor, error) {
	if err := ctx.Err(); err != nil {
		return 0, nil, from, err
	}
	b.mu.Lock()
	b.batches++
	n := b.batches
	b.mu.Unlock()
	if n == 10000 {
		b.longOnce.Do(func() { close(b.long) })
	}
	from.ByKey.At = from.ByKey.At.Add(time.Microsecond) // walked on; never done
	return batch, nil, from, nil
}

func (b *backlogStore) ExpireRemovedWebhooks(ctx context.Context) (bool, error) {
	b.expOnce.Do(func() { close(b.expired) })
	return true, nil
}

// A retention pass runs batch after batch, with no pause and no bound, for as
// long as the walk finds expired jobs; the removed webhooks' windows are
// ended (ExpireRemovedWebhooks) only after the pass. With a large backlog
// (the first pass after an upgrade or a restore, or after the leader was
// gone a while) that is hours: meanwhile an owner whose configured webhook
// was removed, and who has a stored key's webhook, has no webhook, so the
// outbox writes none of its completion events (docs/lifecycle.md,
// store.ExpireRemovedWebhooks), and the leader's cleaner holds one pool
// connection in a tight delete loop. The webhooks' expiry should not wait for
// a whole backlog (end them first, or bound a pass and go on at the next
// tick).
func TestRemovedWebhooksAreNotStarvedByARetentionBacklog(t *testing.T) {
	st := &backlogStore{long: make(chan struct{}), expired: make(chan struct{})}
	c := &maintenance.Cleaner{Store: st, After: 720 * time.Hour}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); c.Run(ctx) }()
	defer func() { cancel(); <-done }()
	select {
	case <-st.expired:
	case <-st.long:
		t.Fatal("10,000 retention batches (a million jobs) in one pass, and the removed webhooks past their window are still not ended: the pass neither yields nor ends them first")
	}
}
