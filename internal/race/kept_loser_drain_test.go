package race_test

import (
	"testing"
	"time"

	"github.com/routerhq/router/internal/breaker"
	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/race"
	"github.com/routerhq/router/internal/store"
)

// A loser kept running after its job's win (here a half-open probe, kept up
// to its first-byte budget of ten minutes) used to hold the replica's
// shutdown: its keeping watched only the runner's hard stop, so Stop waited
// for it to reach its bar although its job had its answer. The drain ends
// the keeping: the loser is cut at once, silent under its bar, an uncounted
// loser (cancelled, OutcomeIgnore). Found by review.
func TestDrainEndsKeptLoser(t *testing.T) {
	adm, changes := watchedPrimary(t, breaker.Settings{ConsecutiveFailures: 1, OpenFor: 100 * time.Millisecond})
	probing := make(chan struct{}, 1)
	b := setupWith(t, quickHedge, adm,
		provSpec{name: "primary", firstByte: 10 * time.Minute, timeout: 20 * time.Minute,
			respond: func(call int, _ *providers.Request) providers.Step {
				if call == 1 {
					return providers.Step{Status: 500}
				}
				probing <- struct{}{}
				return providers.Step{Hang: true}
			}},
		provSpec{name: "fallback", respond: ok(validTriage)})
	if j := b.waitSettled(t, b.submit(t).ID); j.State != store.JobSucceeded {
		t.Fatalf("job 1 %s, want succeeded on the fallback", j.State)
	}
	if o := waitOutcome(t, adm.released); o != race.OutcomeFailure {
		t.Fatalf("the primary's 500 was reported %v, want a failure", o)
	}
	waitStateChange(t, changes, breaker.StateOpen)
	waitStateChange(t, changes, breaker.StateHalfOpen)
	j := b.waitSettled(t, b.submit(t).ID)
	if j.State != store.JobSucceeded || j.Attempts[0].Provider != "primary" {
		t.Fatalf("job 2 %s (attempts %+v), want succeeded, its first attempt the primary's probe", j.State, j.Attempts)
	}
	<-probing // the probe's call was made: it hangs, kept after the win
	b.runner.Drain(30 * time.Second)
	if o := waitOutcome(t, adm.released); o != race.OutcomeIgnore {
		t.Fatalf("the kept probe cut by the drain was reported %v, want ignored (silent under its bar)", o)
	}
	j = b.job(t, j.ID)
	if a := attemptBy(j, "primary"); a == nil || a.State != store.AttemptCancelled {
		t.Fatalf("the kept probe's attempt %+v, want cancelled", a)
	}
}

// waitOutcome is the next outcome released, failing the test if none comes
// within a minute (a loser kept to a bar of minutes never comes).
func waitOutcome(t *testing.T, released <-chan race.Outcome) race.Outcome {
	t.Helper()
	select {
	case o := <-released:
		return o
	case <-time.After(time.Minute):
		t.Fatal("no attempt of the watched provider ended")
	}
	return 0
}
