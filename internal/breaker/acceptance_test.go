package breaker_test

import (
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/routerhq/router/internal/breaker"
	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/race"
	"github.com/routerhq/router/internal/store"
)

// waitChange waits for the provider's breaker to change to state, failing on
// any other change first.
func waitChange(t *testing.T, changes <-chan breaker.Change, provider, to string) {
	t.Helper()
	timeout := time.After(60 * time.Second)
	for {
		select {
		case c := <-changes:
			if c.Provider != provider {
				continue
			}
			if c.To != to {
				t.Fatalf("breaker of %s went %s -> %s while waiting for %s", provider, c.From, c.To, to)
			}
			return
		case <-timeout:
			t.Fatalf("breaker of %s did not become %s", provider, to)
		}
	}
}

func noChange(t *testing.T, changes <-chan breaker.Change, when string) {
	t.Helper()
	select {
	case c := <-changes:
		t.Fatalf("%s: unexpected breaker change %+v", when, c)
	default:
	}
}

func onlyAttemptOn(t *testing.T, j *store.Job, provider string) {
	t.Helper()
	if j.State != store.JobSucceeded || len(j.Attempts) != 1 || j.Attempts[0].Provider != provider || j.Attempts[0].State != store.AttemptWon {
		t.Fatalf("job %s: state %s, attempts %+v; want one winning attempt on %s", j.ID, j.State, j.Attempts, provider)
	}
}

// Acceptance 1 (issue 7): a primary that answers 503 for a while. The breaker
// opens after the configured consecutive failures; while open, jobs go straight
// to the fallback with no attempt on the primary; when half-open, at most the
// configured probes reach the primary; once they succeed the breaker closes and
// traffic returns to the primary. Counted provider calls prove each step.
func TestPrimaryOutageOpensBreakerAndTrafficReturns(t *testing.T) {
	const (
		failures = 3
		probes   = 2
		// open_for passes on the test's clock, which stands still through step
		// 2 however long it takes and is advanced past open_for for step 3.
		openFor = 2 * time.Second
	)
	const (
		modeDown    = iota // 503
		modeProbing        // block until released, then answer
		modeHealthy        // answer
	)
	var mode atomic.Int32
	release := make(chan struct{})
	primaryCalled := make(chan struct{}, 16)
	changes := make(chan breaker.Change, 64)
	clock := newTestClock()
	set := breaker.New(map[string]breaker.Settings{
		"primary":  {ConsecutiveFailures: failures, OpenFor: openFor, HalfOpenProbes: probes},
		"fallback": {ConsecutiveFailures: failures, OpenFor: openFor, HalfOpenProbes: probes},
	}, breaker.Options{OnChange: func(c breaker.Change) { changes <- c }, Now: clock.Now})
	defer set.Close()

	b := setupRace(t, race.Route{}, set, nil,
		provSpec{name: "primary",
			onCall: func(int, *providers.Request) { primaryCalled <- struct{}{} },
			respond: func(int, *providers.Request) providers.Step {
				switch mode.Load() {
				case modeDown:
					return providers.Step{Status: 503}
				case modeProbing:
					<-release
				}
				return providers.Step{Output: validTriage}
			}},
		provSpec{name: "fallback", respond: ok(validTriage)},
	)
	primary, fallback := b.prov["primary"], b.prov["fallback"]

	// Step 1: the primary fails; each job fails over; the third failure opens
	// the breaker.
	for i := 1; i <= failures; i++ {
		if ok, why := set.State("primary"); !ok {
			t.Fatalf("job %d: breaker already refuses: %s", i, why)
		}
		j := b.waitSettled(t, b.submit(t).ID)
		if j.State != store.JobSucceeded || len(j.Attempts) != 2 || j.Attempts[0].Provider != "primary" ||
			j.Attempts[0].State != store.AttemptFailed || j.Attempts[1].Provider != "fallback" {
			t.Fatalf("job %d: %s %+v", i, j.State, j.Attempts)
		}
	}
	waitChange(t, changes, "primary", breaker.StateOpen)
	for range failures {
		<-primaryCalled // step 1's calls; only new calls are awaited below
	}
	if primary.Calls() != failures || fallback.Calls() != failures {
		t.Fatalf("after step 1: primary %d calls, fallback %d; want %d each", primary.Calls(), fallback.Calls(), failures)
	}

	// Step 2: open. Jobs go straight to the fallback: no attempt row and no call
	// on the primary, and the reason is the breaker.
	ok, why := set.State("primary")
	if ok || !strings.Contains(why, "circuit breaker open after 3 consecutive failures") {
		t.Fatalf("open breaker: ok=%v why=%q", ok, why)
	}
	for i := range 3 {
		j := b.waitSettled(t, b.submit(t).ID)
		onlyAttemptOn(t, j, "fallback")
		if j.Attempts[0].Role != store.RoleFailover {
			t.Fatalf("job %d: role %s, want failover", i, j.Attempts[0].Role)
		}
	}
	noChange(t, changes, "step 2")
	if primary.Calls() != failures || fallback.Calls() != failures+3 {
		t.Fatalf("after step 2: primary %d calls, fallback %d; want %d and %d", primary.Calls(), fallback.Calls(), failures, failures+3)
	}

	// Step 3: the primary recovers, but its answers are held so that probes stay
	// in flight. After open_for the breaker is half-open: exactly `probes` jobs
	// reach the primary; the others go to the fallback.
	mode.Store(modeProbing)
	clock.Advance(openFor)
	if ok, _ := set.State("primary"); ok { // open_for has passed only just now
		t.Fatal("breaker admits before open_for has passed")
	}
	clock.Advance(time.Millisecond)
	if !set.HalfOpen("primary") { // asking moves it open -> half-open
		t.Fatal("breaker not half-open after open_for")
	}
	waitChange(t, changes, "primary", breaker.StateHalfOpen)
	var probeJobs []*store.Job
	for range probes {
		probeJobs = append(probeJobs, b.submit(t))
		<-primaryCalled // the probe reached the primary
	}
	if ok, why := set.State("primary"); ok || !strings.Contains(why, "half-open") {
		t.Fatalf("half-open with probes in flight: ok=%v why=%q", ok, why)
	}
	for range 3 {
		j := b.waitSettled(t, b.submit(t).ID)
		onlyAttemptOn(t, j, "fallback")
	}
	if primary.Calls() != failures+probes || fallback.Calls() != failures+6 {
		t.Fatalf("half-open: primary %d calls, fallback %d; want %d and %d", primary.Calls(), fallback.Calls(), failures+probes, failures+6)
	}

	// Step 4: the probes answer; `probes` consecutive successes close the
	// breaker, and traffic returns to the primary.
	close(release)
	for _, pj := range probeJobs {
		onlyAttemptOn(t, b.waitSettled(t, pj.ID), "primary")
	}
	waitChange(t, changes, "primary", breaker.StateClosed)
	mode.Store(modeHealthy)
	for range 3 {
		j := b.waitSettled(t, b.submit(t).ID)
		onlyAttemptOn(t, j, "primary")
		if j.Attempts[0].Role != store.RolePrimary {
			t.Fatalf("role %s, want primary", j.Attempts[0].Role)
		}
	}
	if primary.Calls() != failures+probes+3 || fallback.Calls() != failures+6 {
		t.Fatalf("after recovery: primary %d calls, fallback %d; want %d and %d", primary.Calls(), fallback.Calls(), failures+probes+3, failures+6)
	}
	if ok, _ := set.State("primary"); !ok {
		t.Fatal("breaker refuses after recovery")
	}
}
