package maintenance_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/routerhq/router/internal/maintenance"
)

// resignCounter is a LeaseStore that always grants the lease and counts the
// resignations it is asked for.
type resignCounter struct {
	mu      sync.Mutex
	resigns int
}

func (c *resignCounter) TryLead(ctx context.Context, name, holder string, ttl time.Duration) (bool, error) {
	return true, nil
}

func (c *resignCounter) Resign(ctx context.Context, name, holder string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.resigns++
	return nil
}

func (c *resignCounter) count() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.resigns
}

// A serving replica steps down as it starts draining (Server.stepDown), and
// its elector's Run ends later, when the lifecycle stops. The step-down has
// already deleted the lease row and closed the lease's own connection
// (store.Resign closes it), so Run's resignation as it ends deletes nothing:
// it only dials a new connection to the database (waiting up to 2 s for one
// that does not answer, during the shutdown) and, should that fail, logs
// "leader lease: could not resign" for a lease it no longer held.
func TestRunDoesNotResignAgainAfterStepDown(t *testing.T) {
	st := &resignCounter{}
	e := maintenance.NewElector(st, "maintenance", "replica-a", time.Minute, nil)
	ctx := context.Background()
	if !e.Once(ctx) {
		t.Fatal("the replica did not lead")
	}
	if err := e.StepDown(ctx); err != nil {
		t.Fatalf("StepDown: %v", err)
	}
	if n := st.count(); n != 1 {
		t.Fatalf("StepDown resigned %d times, want 1", n)
	}
	stopped, stop := context.WithCancel(ctx)
	stop() // the lifecycle stops: Run's context has ended
	e.Run(stopped)
	if n := st.count(); n != 1 {
		t.Errorf("after StepDown had resigned, Run resigned again as it ended: %d resignations in all, want 1", n)
	}
}

// failFirstResign grants the lease and fails the first resignation.
type failFirstResign struct{ resignCounter }

func (f *failFirstResign) Resign(ctx context.Context, name, holder string) error {
	_ = f.resignCounter.Resign(ctx, name, holder)
	if f.count() == 1 {
		return errors.New("connection reset")
	}
	return nil
}

// A step-down whose resignation failed leaves it owed: Run resigns as it
// ends, once, so another replica need not wait for the lease to expire.
func TestRunResignsAsItEndsWhenTheStepDownsResignationFailed(t *testing.T) {
	st := &failFirstResign{}
	e := maintenance.NewElector(st, "maintenance", "replica-a", time.Minute, nil)
	ctx := context.Background()
	if !e.Once(ctx) {
		t.Fatal("the replica did not lead")
	}
	if err := e.StepDown(ctx); err == nil {
		t.Fatal("StepDown: the resignation failed, and StepDown said nothing")
	}
	stopped, stop := context.WithCancel(ctx)
	stop()
	e.Run(stopped)
	if n := st.count(); n != 2 {
		t.Errorf("%d resignations in all; want 2: the step-down's, failed, and Run's as it ended", n)
	}
}
