package breaker_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/routerhq/router/internal/breaker"
	"github.com/routerhq/router/internal/config"
	"github.com/routerhq/router/internal/race"
	"github.com/routerhq/router/internal/store"
	"github.com/routerhq/router/internal/testdb"
)

func newSet(s breaker.Settings) (*breaker.Set, chan breaker.Change) {
	return newSetClock(s, nil)
}

// newSetClock is newSet on the given clock (nil: time.Now).
func newSetClock(s breaker.Settings, clock *testClock) (*breaker.Set, chan breaker.Change) {
	changes := make(chan breaker.Change, 64)
	opt := breaker.Options{OnChange: func(c breaker.Change) { changes <- c }}
	if clock != nil {
		opt.Now = clock.Now
	}
	set := breaker.New(map[string]breaker.Settings{"p": s}, opt)
	return set, changes
}

func admit(t *testing.T, set *breaker.Set) func(race.Outcome) {
	t.Helper()
	release, ok, why := set.Admit("p")
	if !ok {
		t.Fatalf("not admitted: %s", why)
	}
	return release
}

func TestOutcomesCount(t *testing.T) {
	set, _ := newSet(breaker.Settings{ConsecutiveFailures: 2, OpenFor: time.Hour})
	defer set.Close()
	// Ignored outcomes (hedge losers, cancellations) and successes (including
	// caller errors, which the race reports as OutcomeSuccess) do not trip it;
	// a success resets the consecutive failures.
	admit(t, set)(race.OutcomeFailure)
	admit(t, set)(race.OutcomeIgnore)
	admit(t, set)(race.OutcomeSuccess)
	admit(t, set)(race.OutcomeFailure)
	for range 5 {
		admit(t, set)(race.OutcomeIgnore)
	}
	snap := set.Snapshot()
	if len(snap) != 1 || snap[0].State != breaker.StateClosed || snap[0].Counts.ConsecutiveFailures != 1 ||
		snap[0].Counts.TotalExclusions != 6 || snap[0].Counts.TotalSuccesses != 1 {
		t.Fatalf("snapshot %+v", snap)
	}
	// release is idempotent: a second call does not count again.
	r := admit(t, set)
	r(race.OutcomeFailure)
	r(race.OutcomeFailure)
	if _, ok, why := set.Admit("p"); ok || !strings.Contains(why, "open after 2 consecutive failures") {
		t.Fatalf("after two failures: ok=%v why=%q", ok, why)
	}
	if st := set.BreakerStates(); st["p"] != breaker.StateOpen {
		t.Fatalf("states %v", st)
	}
	// A provider without a breaker is always admitted.
	if release, ok, _ := set.Admit("other"); !ok {
		t.Fatal("unknown provider refused")
	} else {
		release(race.OutcomeFailure)
	}
	if ok, _ := set.State("other"); !ok {
		t.Fatal("unknown provider not eligible")
	}
}

func TestHalfOpenProbes(t *testing.T) {
	const openFor = 20 * time.Millisecond
	clock := newTestClock()
	set, changes := newSetClock(breaker.Settings{ConsecutiveFailures: 1, OpenFor: openFor, HalfOpenProbes: 2}, clock)
	defer set.Close()
	admit(t, set)(race.OutcomeFailure)
	waitChange(t, changes, "p", breaker.StateOpen)
	if _, ok, why := set.Admit("p"); ok || !strings.Contains(why, "open after 1 consecutive failures") {
		t.Fatalf("open on a clock standing still: ok=%v why=%q", ok, why)
	}
	// When open_for has passed the Set moves open -> half-open as it is asked
	// (its timer asks too, without a request), so the change is published.
	clock.Advance(openFor + time.Millisecond)
	set.Snapshot()
	waitChange(t, changes, "p", breaker.StateHalfOpen)
	if ok, _ := set.State("p"); !ok {
		t.Fatal("half-open with free probes is not eligible")
	}
	p1, p2 := admit(t, set), admit(t, set)
	if _, ok, why := set.Admit("p"); ok || !strings.Contains(why, "half-open") {
		t.Fatalf("third probe: ok=%v why=%q", ok, why)
	}
	if ok, _ := set.State("p"); ok {
		t.Fatal("State admits past the probes")
	}
	// A probe that is ignored (cancelled) gives its slot back.
	p2(race.OutcomeIgnore)
	p3 := admit(t, set)
	// One failed probe opens it again.
	p1(race.OutcomeFailure)
	waitChange(t, changes, "p", breaker.StateOpen)
	p3(race.OutcomeSuccess) // from the previous generation: not counted
	clock.Advance(openFor + time.Millisecond)
	set.Snapshot()
	waitChange(t, changes, "p", breaker.StateHalfOpen)
	admit(t, set)(race.OutcomeSuccess)
	admit(t, set)(race.OutcomeSuccess)
	waitChange(t, changes, "p", breaker.StateClosed)
}

func TestFromConfig(t *testing.T) {
	set := breaker.FromConfig([]config.Provider{
		{Name: "a", Breaker: config.Breaker{ConsecutiveFailures: 1, OpenFor: config.Duration(time.Hour), HalfOpenProbes: 1}},
		{Name: "b"},
	}, breaker.Options{})
	defer set.Close()
	if got := set.Providers(); len(got) != 2 || got[0] != "a" || got[1] != "b" {
		t.Fatalf("providers %v", got)
	}
	r, _, _ := set.Admit("a")
	r(race.OutcomeFailure)
	if ok, _ := set.State("a"); ok {
		t.Fatal("a should be open after one failure")
	}
	snap := set.Snapshot()
	if snap[1].Settings.ConsecutiveFailures != 5 || snap[1].Settings.OpenFor != 30*time.Second || snap[1].Settings.HalfOpenProbes != 1 {
		t.Fatalf("defaults %+v", snap[1].Settings)
	}
}

// Each replica publishes its own view; readers see both; a stopped publisher
// removes its rows and a silent one ages out.
func TestPublisherTwoReplicas(t *testing.T) {
	db := testdb.New(t, store.Options{})
	ctx := context.Background()
	s1, _ := newSet(breaker.Settings{ConsecutiveFailures: 1, OpenFor: time.Hour})
	s2, _ := newSet(breaker.Settings{ConsecutiveFailures: 1, OpenFor: time.Hour})
	defer s1.Close()
	defer s2.Close()
	published := make(chan error, 16)
	p1 := breaker.NewPublisher(s1, db.Store, breaker.PublisherOptions{Replica: "r1", Interval: time.Hour,
		Published: func(err error) { published <- err }})
	p2 := breaker.NewPublisher(s2, db.Store, breaker.PublisherOptions{Replica: "r2"})
	if err := p2.Publish(ctx); err != nil {
		t.Fatal(err)
	}
	rctx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { p1.Run(rctx); close(done) }()
	if err := <-published; err != nil { // the first publication, at start
		t.Fatal(err)
	}
	// A change is published at once (the interval is an hour).
	r, _, _ := s1.Admit("p")
	r(race.OutcomeFailure)
	if err := <-published; err != nil {
		t.Fatal(err)
	}
	list, err := db.Store.ListBreakerStates(ctx, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 2 || list[0].Replica != "r1" || list[0].State != breaker.StateOpen || list[0].Failures != 0 ||
		list[1].Replica != "r2" || list[1].State != breaker.StateClosed {
		// Counts are cleared by the state change (gobreaker), so the open row
		// shows zero failures since it opened.
		t.Fatalf("list %+v", list)
	}
	stop()
	<-done
	list, _ = db.Store.ListBreakerStates(ctx, time.Minute)
	if len(list) != 1 || list[0].Replica != "r2" {
		t.Fatalf("after r1 stopped: %+v", list)
	}
	if breaker.StaleAfter(0) != 15*time.Second {
		t.Fatal("StaleAfter default")
	}
}
