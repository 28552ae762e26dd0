package maintenance_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/routerhq/router/internal/maintenance"
	"github.com/routerhq/router/internal/store"
)

// rewalkStore has a backlog of expired jobs that never ends (every batch
// deletes a full batch and the jobs' walk is never done, so every pass stops
// at maxBatchesPerPass with more to do) and a short conformance history: its
// walk is one batch, done at once. It counts the conformance walks started
// from the first run (from 0) and closes enough once the jobs' walk has had
// batches passes of 100 batches.
type rewalkStore struct {
	passes int // close enough after passes*100 job batches

	mu        sync.Mutex
	batches   int
	confWalks int
	enough    chan struct{}
	once      sync.Once
}

func (s *rewalkStore) DeleteExpiredJobsFrom(ctx context.Context, after time.Duration, batch int, from store.RetentionCursor) (int, []string, store.RetentionCursor, error) {
	s.mu.Lock()
	s.batches++
	if s.batches == s.passes*100 {
		s.once.Do(func() { close(s.enough) })
	}
	s.mu.Unlock()
	from.ByKey.At = from.ByKey.At.Add(time.Microsecond) // walked on; never done
	return batch, nil, from, nil
}

func (s *rewalkStore) DeleteOldConformanceRunsFrom(ctx context.Context, after time.Duration, batch int, from int64) (int, int64, bool, error) {
	s.mu.Lock()
	if from == 0 {
		s.confWalks++
	}
	s.mu.Unlock()
	return 0, from + 3, true, nil // 3 runs, all kept: the walk is done
}

// docs/conformance.md (History and retention) says the leader deletes old
// conformance runs "in its retention pass: every minute". While the expired
// jobs' walk has a backlog, Run starts the next pass at once (more), and that
// pass runs every step again, not just the walk that has more: the
// conformance walk, done a moment before, starts over from the first run each
// time — every 10,000 jobs, about every second during a backlog drain,
// instead of once a minute. Each such walk re-reads every kept run with four
// correlated lookups (store.conformanceRunKeptSQL). (The same holds the other
// way round: a conformance backlog restarts the jobs' walk from the oldest
// entry at every pass.) A pass that follows at once should go on only with
// the walk that stopped with more to do.
func TestABacklogOfJobsDoesNotRestartTheConformanceWalkAtEveryPass(t *testing.T) {
	st := &rewalkStore{passes: 5, enough: make(chan struct{})}
	c := &maintenance.Cleaner{Store: st, After: 720 * time.Hour, ConformanceAfter: 2160 * time.Hour,
		Interval: time.Hour} // no tick during the test: every pass after the first follows at once
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); c.Run(ctx) }()
	<-st.enough
	cancel()
	<-done
	st.mu.Lock()
	walks := st.confWalks
	st.mu.Unlock()
	if walks > 1 {
		t.Errorf("the conformance runs were walked from the first %d times within one interval (5 capped passes of the jobs' backlog), want once: every pass that follows at once starts that finished walk over", walks)
	}
}

// confBacklogStore is rewalkStore the other way round: the conformance
// runs' walk never ends, the expired jobs' walk is one batch, done at once.
// It counts the jobs' walks started from the oldest entry and closes enough
// once the conformance walk has had passes passes of 100 batches.
type confBacklogStore struct {
	passes int

	mu        sync.Mutex
	batches   int
	jobsWalks int
	enough    chan struct{}
	once      sync.Once
}

func (s *confBacklogStore) DeleteExpiredJobsFrom(ctx context.Context, after time.Duration, batch int, from store.RetentionCursor) (int, []string, store.RetentionCursor, error) {
	s.mu.Lock()
	if from == (store.RetentionCursor{}) {
		s.jobsWalks++
	}
	s.mu.Unlock()
	done := store.RetentionPosition{Done: true}
	return 0, nil, store.RetentionCursor{ByKey: done, ByRelease: done}, nil // all kept: the walk is done
}

func (s *confBacklogStore) DeleteOldConformanceRunsFrom(ctx context.Context, after time.Duration, batch int, from int64) (int, int64, bool, error) {
	s.mu.Lock()
	s.batches++
	if s.batches == s.passes*100 {
		s.once.Do(func() { close(s.enough) })
	}
	s.mu.Unlock()
	return batch, from + int64(batch), false, nil // walked on; never done
}

// A backlog of old conformance runs (retention enabled on a long history)
// must not restart the expired jobs' walk, done, from the oldest entry at
// every pass that follows at once either.
func TestABacklogOfConformanceRunsDoesNotRestartTheJobsWalkAtEveryPass(t *testing.T) {
	st := &confBacklogStore{passes: 5, enough: make(chan struct{})}
	c := &maintenance.Cleaner{Store: st, After: 720 * time.Hour, ConformanceAfter: 2160 * time.Hour,
		Interval: time.Hour} // no tick during the test
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); c.Run(ctx) }()
	<-st.enough
	cancel()
	<-done
	st.mu.Lock()
	walks := st.jobsWalks
	st.mu.Unlock()
	if walks != 1 {
		t.Errorf("the expired jobs were walked from the oldest entry %d times within one interval (5 capped passes of the conformance backlog), want once", walks)
	}
}

// tickStore is rewalkStore that also closes twice once the conformance walk
// has started from the first run a second time.
type tickStore struct {
	rewalkStore
	twice     chan struct{}
	twiceOnce sync.Once
}

func (s *tickStore) DeleteOldConformanceRunsFrom(ctx context.Context, after time.Duration, batch int, from int64) (int, int64, bool, error) {
	n, next, done, err := s.rewalkStore.DeleteOldConformanceRunsFrom(ctx, after, batch, from)
	s.mu.Lock()
	if s.confWalks == 2 {
		s.twiceOnce.Do(func() { close(s.twice) })
	}
	s.mu.Unlock()
	return n, next, done, err
}

// The walk with nothing more keeps its own pace during the other's backlog:
// an Interval that passed while the backlog drained runs it again (here
// Interval is a nanosecond, so it has always passed by the next pass), not
// only once the backlog is gone — which could be hours.
func TestATickDuringABacklogStillRunsTheOtherWalk(t *testing.T) {
	st := &tickStore{rewalkStore: rewalkStore{passes: 50, enough: make(chan struct{})}, twice: make(chan struct{})}
	c := &maintenance.Cleaner{Store: st, After: 720 * time.Hour, ConformanceAfter: 2160 * time.Hour,
		Interval: time.Nanosecond}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); c.Run(ctx) }()
	select {
	case <-st.twice:
	case <-st.enough: // 50 capped passes of the jobs' backlog
	}
	cancel()
	<-done
	st.mu.Lock()
	walks := st.confWalks
	st.mu.Unlock()
	if walks < 2 {
		t.Errorf("the conformance runs were walked %d time(s) during 50 capped passes of the jobs' backlog with Interval 1ns, want again after a tick: a finished walk must keep its pace while the other drains", walks)
	}
}
