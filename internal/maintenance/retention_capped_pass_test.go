package maintenance_test

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/routerhq/router/internal/maintenance"
	"github.com/routerhq/router/internal/store"
)

// walkStore is a RetentionStore whose walk is length batches long, each
// deleting a full batch; a cursor's place is its ByKey.At in nanoseconds
// (the zero cursor: 0). It records the place each batch started from and,
// as the optional webhook expirer, the batches before each expiry; done is
// closed when the walk ends.
type walkStore struct {
	length int
	done   chan struct{}

	mu      sync.Mutex
	froms   []int
	expires []int // len(froms) at each ExpireRemovedWebhooks
}

func (w *walkStore) DeleteExpiredJobsFrom(ctx context.Context, after time.Duration, batch int, from store.RetentionCursor) (int, []string, store.RetentionCursor, error) {
	k := 0
	if !from.ByKey.At.IsZero() {
		k = int(from.ByKey.At.UnixNano())
	}
	w.mu.Lock()
	w.froms = append(w.froms, k)
	w.mu.Unlock()
	end := k+1 == w.length
	if end && w.done != nil {
		close(w.done)
	}
	return batch, nil, store.RetentionCursor{
		ByKey:     store.RetentionPosition{At: time.Unix(0, int64(k+1)), Done: end},
		ByRelease: store.RetentionPosition{Done: true},
	}, nil
}

func (w *walkStore) ExpireRemovedWebhooks(ctx context.Context) (bool, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.expires = append(w.expires, len(w.froms))
	return false, nil
}

func (w *walkStore) takeFroms() []int {
	w.mu.Lock()
	defer w.mu.Unlock()
	f := w.froms
	w.froms = nil
	return f
}

func places(from, to int) []int {
	var p []int
	for k := from; k < to; k++ {
		p = append(p, k)
	}
	return p
}

// A pass stops after 100 batches (10,000 jobs at the default batch), and
// the next pass walks on from where it stopped, not from the oldest: a
// backlog drains over passes. Once a walk is done, the pass after it starts
// from the oldest again (where the jobs passed over are).
func TestRetentionBacklogDrainsOverCappedPasses(t *testing.T) {
	st := &walkStore{length: 250}
	c := &maintenance.Cleaner{Store: st, After: 720 * time.Hour}
	ctx := context.Background()
	for i, want := range [][2]int{{0, 100}, {100, 200}, {200, 250}, {0, 100}} {
		n, err := c.Once(ctx)
		if err != nil {
			t.Fatalf("pass %d: %v", i+1, err)
		}
		froms := st.takeFroms()
		if !slices.Equal(froms, places(want[0], want[1])) {
			t.Fatalf("pass %d ran %d batches, from place %v; want the places %d to %d", i+1, len(froms), froms[:1], want[0], want[1]-1)
		}
		if n != 100*len(froms) {
			t.Fatalf("pass %d deleted %d jobs in %d batches of 100", i+1, n, len(froms))
		}
	}
}

// Run starts the next pass at once when a pass stopped with more to delete
// (a backlog drains as fast as before the cap, not 10,000 jobs an Interval),
// and ends the removed webhooks past their window before each pass. The
// Interval is an hour: were Run to wait for its tick, the walk would not end
// within the test's run.
func TestRetentionRunEndsRemovedWebhooksBeforeEachCappedPass(t *testing.T) {
	st := &walkStore{length: 250, done: make(chan struct{})}
	c := &maintenance.Cleaner{Store: st, After: 720 * time.Hour, Interval: time.Hour}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); c.Run(ctx) }()
	<-st.done
	cancel()
	<-done
	st.mu.Lock()
	defer st.mu.Unlock()
	if !slices.Equal(st.expires, []int{0, 100, 200}) {
		t.Fatalf("removed webhooks ended after %v batches; want before each pass: after 0, 100 and 200", st.expires)
	}
}
