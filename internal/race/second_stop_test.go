package race_test

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/race"
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

// lines counts the lines of l that hold msg.
func (l *logBuffer) lines(msg string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Count(l.buf.String(), msg)
}

const (
	gaveUpGrace = "job runs still going after the attempts in flight were cut"
	gaveUpLast  = "job runs still going after their writes were cancelled"
)

// deafStopBundle is a runner with one job run that does not end (its
// adapter ignores the cut) and its log, for the tests of two Stops at once.
func deafStopBundle(t *testing.T, grace time.Duration) (*racetest.Bundle, *logBuffer) {
	t.Helper()
	d := &deafAdapter{called: make(chan struct{}, 1), release: make(chan struct{})}
	logs := &logBuffer{}
	b := racetest.New(t, racetest.Options{StopGrace: grace, Log: slog.New(slog.NewTextHandler(logs, nil)),
		Providers: []racetest.Provider{{Name: "primary", Adapter: d}}})
	t.Cleanup(sync.OnceFunc(func() { close(d.release) })) // before the bundle stops
	b.Submit(t)
	<-d.called
	return b, logs
}

// A second signal that comes while the drain's Stop waits out its grace for
// a run that does not end used to start a grace of its own: the process
// waited up to StopGrace more, and the same runs were logged twice. It now
// ends with the drain's Stop: one give-up, logged once. Found by review.
func TestSecondStopInTheGraceSharesTheDrainsGiveUp(t *testing.T) {
	b, logs := deafStopBundle(t, 3*time.Second)
	drainStopped := make(chan struct{})
	go func() {
		defer close(drainStopped)
		ended, cancel := context.WithCancel(context.Background())
		cancel()
		b.Runner.Stop(ended) // the drain ran out: the attempts are cut, the grace begins
	}()
	select {
	case <-race.CutDone(b.Runner): // the cut: the runner's base context ends
	case <-time.After(hangBound):
		t.Fatal("the drain's Stop never cut the attempts")
	}
	ended, cancel := context.WithCancel(context.Background())
	cancel()
	b.Runner.Stop(ended) // the second signal's, within the drain's grace
	select {
	case <-drainStopped:
	case <-time.After(hangBound):
		t.Fatal("the drain's Stop hangs")
	}
	if n := logs.lines(gaveUpGrace); n != 1 {
		t.Fatalf("the runs given up on were logged %d times, want once (one grace, shared by both Stops):\n%s", n, logs.buf.String())
	}
}

// A Stop that returns because another gave up on the runs returns only once
// that one's last wait is over (its log says so), not at its cancellation of
// the runs' writes: the process must not close the database under a run
// still recording its end. Found by review.
func TestDrainsStopReturnsAfterTheOtherStopsLastWait(t *testing.T) {
	b, logs := deafStopBundle(t, 200*time.Millisecond)
	b.Runner.Drain(time.Hour)
	drainStopped := make(chan struct{})
	go func() {
		defer close(drainStopped)
		ctx, cancel := context.WithTimeout(context.Background(), time.Hour)
		defer cancel()
		b.Runner.Stop(ctx) // ServeListeners'
	}()
	ended, cancel := context.WithCancel(context.Background())
	cancel()
	go b.Runner.Stop(ended) // Server.StopNow's
	select {
	case <-drainStopped:
	case <-time.After(hangBound):
		t.Fatal("the drain's Stop hangs")
	}
	if n := logs.lines(gaveUpLast); n != 1 {
		t.Fatalf("the drain's Stop returned before the second signal's Stop ended its last wait (%d lines say it gave up):\n%s", n, logs.buf.String())
	}
}
