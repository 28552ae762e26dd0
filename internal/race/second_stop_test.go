package race_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/racetest"
)

// deafAdapter is a provider's adapter that ignores its context: a call waits
// for release whatever happens to the attempt. called receives once, when
// the first call is made.
type deafAdapter struct {
	called  chan struct{}
	release chan struct{}
}

func (d *deafAdapter) Name() string { return "deaf" }

func (d *deafAdapter) Complete(context.Context, *providers.Request) (*providers.Response, error) {
	select {
	case d.called <- struct{}{}:
	default:
	}
	<-d.release
	return nil, context.Canceled
}

// A process told to stop calls Runner.Stop with the drain budget
// (server.ServeListeners); a second signal calls it again with an ended
// context (Server.StopNow), which cuts the attempts in flight and, when a
// job run still does not end (an adapter that ignores its context), gives up
// on it after StopGrace and a last short wait. The drain's Stop used to
// watch only for every run's end or its own budget, so it went on waiting
// for the run given up on until the whole drain budget ran out: the second
// signal did not stop the process at once. Once one Stop has given up on
// the runs, every Stop returns. The two Stops run at the same time, in
// either order: the property holds for both. Found by review.
func TestSecondStopEndsTheDrainsStopToo(t *testing.T) {
	d := &deafAdapter{called: make(chan struct{}, 1), release: make(chan struct{})}
	b := racetest.New(t, racetest.Options{StopGrace: 200 * time.Millisecond,
		Providers: []racetest.Provider{{Name: "primary", Adapter: d}}})
	release := sync.OnceFunc(func() { close(d.release) })
	t.Cleanup(release) // before the bundle stops, should the test fail first
	job := b.Submit(t)
	changed, unsubscribe := b.Listener.Subscribe(job.ID)
	defer unsubscribe()
	<-d.called
	if b.Runner.Cut() {
		t.Fatal("Cut before any Stop")
	}

	// A drain budget no test waits out: without the fix, the drain's Stop
	// hangs, and hangBound turns the hang into a failure.
	const drain = time.Hour
	b.Runner.Drain(drain)
	drainStopped := make(chan struct{})
	go func() {
		defer close(drainStopped)
		ctx, cancel := context.WithTimeout(context.Background(), drain)
		defer cancel()
		b.Runner.Stop(ctx) // ServeListeners'
	}()

	ended, cancel := context.WithCancel(context.Background())
	cancel()
	b.Runner.Stop(ended) // Server.StopNow's (the second signal)

	select {
	case <-drainStopped:
	case <-time.After(hangBound):
		t.Fatalf("the drain's Stop still waited %s after the second signal's Stop gave up on the job run", hangBound)
	}

	// The run given up on still goes, but its attempt was cut: a Stop now
	// cuts nothing more (Server.InFlight, which a second signal's log reads,
	// counts it no more).
	if !b.Runner.Runs(job.ID) || !b.Runner.Cut() {
		t.Fatalf("after the Stops: Runs %v, Cut %v; want true, true", b.Runner.Runs(job.ID), b.Runner.Cut())
	}

	// Let the run given up on end before the test's database goes.
	release()
	timeout := time.After(hangBound)
	for b.Runner.Runs(job.ID) {
		select {
		case <-changed:
		case <-timeout:
			t.Fatalf("the job's run did not end within %s of its adapter's call returning", hangBound)
		}
	}
}
