package maintenance_test

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/routerhq/router/internal/maintenance"
	"github.com/routerhq/router/internal/store"
)

// failingStore's walk is two batches (3 jobs, then 2), the first failing
// when failBatch is set; ending removed webhooks fails when failExpire is.
type failingStore struct {
	failBatch, failExpire bool
}

func (f *failingStore) DeleteExpiredJobsFrom(ctx context.Context, after time.Duration, batch int, from store.RetentionCursor) (int, []string, store.RetentionCursor, error) {
	if f.failBatch {
		return 0, nil, from, errors.New("connection reset")
	}
	if from.ByKey.At.IsZero() {
		return 3, nil, store.RetentionCursor{ByKey: store.RetentionPosition{At: time.Unix(0, 1)}}, nil
	}
	return 2, nil, store.RetentionCursor{ByKey: store.RetentionPosition{Done: true}, ByRelease: store.RetentionPosition{Done: true}}, nil
}

func (f *failingStore) ExpireRemovedWebhooks(ctx context.Context) (bool, error) {
	if f.failExpire {
		return false, errors.New("connection reset")
	}
	return false, nil
}

// observed records what the cleaner reported; failed receives each failed
// pass.
type observed struct {
	mu      sync.Mutex
	deleted []int
	failed  chan struct{}
}

func (o *observed) RetentionDeleted(n int) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.deleted = append(o.deleted, n)
}

func (o *observed) RetentionPassFailed() { o.failed <- struct{}{} }

// The cleaner reports each batch's deletions and each failed pass — one
// whose deletion or whose ending of removed webhooks failed, counted once
// if both did — to its Observer (router_retention_jobs_deleted_total,
// router_retention_pass_errors_total).
func TestCleanerReportsDeletedJobsAndFailedPasses(t *testing.T) {
	for _, tc := range []struct {
		name        string
		st          *failingStore
		wantDeleted []int
	}{
		{"batch fails", &failingStore{failBatch: true}, nil},
		{"webhook expiry fails", &failingStore{failExpire: true}, []int{3, 2}},
		{"both fail", &failingStore{failBatch: true, failExpire: true}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := &observed{failed: make(chan struct{}, 2)}
			c := &maintenance.Cleaner{Store: tc.st, Interval: time.Hour, Observer: o}
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan struct{})
			go func() { defer close(done); c.Run(ctx) }()
			<-o.failed // the first pass's, reported as it ends
			cancel()
			<-done
			if n := len(o.failed); n != 0 {
				t.Errorf("%d more failed passes reported; want the one", n)
			}
			o.mu.Lock()
			defer o.mu.Unlock()
			if !slices.Equal(o.deleted, tc.wantDeleted) {
				t.Errorf("deletions reported %v; want %v", o.deleted, tc.wantDeleted)
			}
		})
	}
	o := &observed{failed: make(chan struct{}, 1)}
	c := &maintenance.Cleaner{Store: &failingStore{}, Observer: o}
	if n, err := c.Once(context.Background()); err != nil || n != 5 {
		t.Fatalf("Once: %d, %v; want 5 deleted", n, err)
	}
	if !slices.Equal(o.deleted, []int{3, 2}) {
		t.Errorf("a pass that succeeded reported deletions %v; want [3 2]", o.deleted)
	}
	if len(o.failed) != 0 {
		t.Error("a pass that succeeded was reported failed")
	}
}
