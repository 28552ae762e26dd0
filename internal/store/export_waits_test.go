package store

import (
	"context"
	"time"
)

// SetBatchAcquireWait sets how long a batch waits for its connection
// (batchAcquireWait).
func (s *Store) SetBatchAcquireWait(d time.Duration) { s.acquireWait = d }

// SetSettleWait sets the bound of each database call a win or a claim makes
// without its caller's cancellation after its batch (settleWait).
func (s *Store) SetSettleWait(d time.Duration) { s.settleWait = d }

// SetCommitClock makes f the clock commit waits are timed by (commitClock)
// until restore is called.
func SetCommitClock(f func() time.Time) (restore func()) {
	commitClock = f
	return func() { commitClock = time.Now }
}

// SetBeforePathBatch installs f, run before each batch of the success path's
// commits (claims and wins) goes out: claims of the requests it returns join
// the batch ahead of its own items (their outcomes are told to nobody).
func (s *Store) SetBeforePathBatch(f func() []NewJob) {
	exec := s.paths.exec
	s.paths.exec = func(ctx context.Context, batch []*pathCommit) {
		var extra []*pathCommit
		for _, nj := range f() {
			extra = append(extra, &pathCommit{claim: newClaim(nj)})
		}
		exec(ctx, append(extra, batch...))
	}
}
