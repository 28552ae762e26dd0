package maintenance_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/routerhq/router/internal/maintenance"
)

// A database call sent on a connection gone silent (a failover whose old
// primary vanished, a partition) meets no refusal and no answer: it ends only
// when its context does. These tests stand for such a connection with fakes
// that wait for their context, and check that the maintenance loops, whose
// contexts last the replica's whole life, do not wait with them.

// never bounds the wait for something that, with the fix, happens within a
// fraction of a second: past it the test fails instead of hanging.
const never = 20 * time.Second

// silentOnce is a lease store whose first try goes out on a silent
// connection; the later ones succeed. renewed is closed when the third try
// starts, that is once the second has been answered and taken into account.
type silentOnce struct {
	calls   atomic.Int32
	renewed chan struct{}
}

func (s *silentOnce) TryLead(ctx context.Context, _, _ string, _ time.Duration) (bool, error) {
	switch s.calls.Add(1) {
	case 1:
		<-ctx.Done()
		return false, ctx.Err()
	case 3:
		close(s.renewed)
	}
	return true, nil
}

func (s *silentOnce) Resign(context.Context, string, string) error { return nil }

// One renewal that never gets an answer does not stop the election: the
// elector gives it up after a renewal interval, tries again, and leads.
// Before, Run's renewal waited as long as the replica lived, so in a failover
// no replica led (no lease expiry, no reconciliation, no retention).
func TestElectorRecoversFromASilentRenewal(t *testing.T) {
	st := &silentOnce{renewed: make(chan struct{})}
	ttl := 1500 * time.Millisecond // the silent try is given up after ttl/3
	e := maintenance.NewElector(st, "maintenance", "replica-a", ttl, nil)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); e.Run(ctx) }()
	defer func() { cancel(); <-done }()
	select {
	case <-st.renewed:
	case <-time.After(never):
		t.Fatalf("after %s the elector has tried the lease %d time(s): it still waits for a renewal that never answers", never, st.calls.Load())
	}
	// The second try succeeded less than a renewal interval ago, with nine
	// tenths of the lease to run.
	if !e.IsLeader() {
		t.Fatal("a renewal succeeded after the silent one, yet this replica does not lead")
	}
}

// silentResign is a lease store that grants the lease, and whose resignation
// goes out on a silent connection.
type silentResign struct{}

func (silentResign) TryLead(context.Context, string, string, time.Duration) (bool, error) {
	return true, nil
}

func (silentResign) Resign(ctx context.Context, _, _ string) error {
	<-ctx.Done()
	return ctx.Err()
}

// A step-down whose resignation never gets an answer returns anyway, leaving
// the lease to expire, even when its caller set no deadline.
func TestStepDownDoesNotWaitForASilentResignation(t *testing.T) {
	e := maintenance.NewElector(silentResign{}, "maintenance", "replica-a", 300*time.Millisecond, nil)
	if !e.Once(context.Background()) {
		t.Fatal("the replica did not become leader")
	}
	stepped := make(chan error, 1)
	go func() { stepped <- e.StepDown(context.Background()) }()
	select {
	case err := <-stepped:
		if err == nil {
			t.Fatal("a resignation that got no answer reported success")
		}
	case <-time.After(never):
		t.Fatalf("after %s StepDown still waits for a resignation that never answers", never)
	}
	if e.IsLeader() {
		t.Fatal("a replica that stepped down still says it leads")
	}
}

// silentBatch is a retention store whose first batch goes out on a silent
// connection; the later ones find nothing to delete. retried is closed at the
// second batch.
type silentBatch struct {
	calls   atomic.Int32
	retried chan struct{}
}

func (s *silentBatch) DeleteExpiredJobBatch(ctx context.Context, _ time.Duration, _ int, _ []string) (int, []string, error) {
	switch s.calls.Add(1) {
	case 1:
		<-ctx.Done()
		return 0, nil, ctx.Err()
	case 2:
		close(s.retried)
	}
	return 0, nil, nil
}

type alwaysLeader struct{}

func (alwaysLeader) IsLeader() bool { return true }

// One batch that never gets an answer does not stop retention on the leader:
// the pass gives it up after BatchTimeout, says so, and the next pass runs.
func TestCleanerRecoversFromASilentBatch(t *testing.T) {
	t.Run("Once", func(t *testing.T) {
		c := &maintenance.Cleaner{Store: &silentBatch{retried: make(chan struct{})}, BatchTimeout: 50 * time.Millisecond}
		done := make(chan error, 1)
		go func() { _, err := c.Once(context.Background()); done <- err }()
		select {
		case err := <-done:
			if !errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("a pass whose batch got no answer returned %v, want a deadline error", err)
			}
		case <-time.After(never):
			t.Fatalf("after %s the pass still waits for a batch that never answers", never)
		}
	})
	t.Run("Run", func(t *testing.T) {
		st := &silentBatch{retried: make(chan struct{})}
		c := &maintenance.Cleaner{Store: st, Leader: alwaysLeader{}, Interval: 50 * time.Millisecond, BatchTimeout: 50 * time.Millisecond}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() { defer close(done); c.Run(ctx) }()
		defer func() { cancel(); <-done }()
		select {
		case <-st.retried:
		case <-time.After(never):
			t.Fatalf("after %s at an interval of 50ms the cleaner has tried %d batch(es): it still waits for one that never answers", never, st.calls.Load())
		}
	})
}
