package race_test

import (
	"sync"
	"testing"
	"time"

	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/race"
	"github.com/routerhq/router/internal/store"
)

// keptLoserEnds records the state the Observer is told each provider's
// attempt ended in (router_attempts_total's outcome label) and the races it
// is told each lost (router_races_lost_total), and closes a channel when
// provider's attempt ends.
type keptLoserEnds struct {
	nopRefusalObserver
	provider string
	mu       sync.Mutex
	states   map[string]string
	lost     map[string]int
	once     sync.Once
	ended    chan struct{}
}

func (o *keptLoserEnds) AttemptFinished(provider, _, state string, _ providers.Kind, _ time.Duration, _ providers.Usage) {
	o.mu.Lock()
	o.states[provider] = state
	o.mu.Unlock()
	if provider == o.provider {
		o.once.Do(func() { close(o.ended) })
	}
}

func (o *keptLoserEnds) RaceLost(provider string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.lost[provider]++
}

func (o *keptLoserEnds) state(p string) string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.states[p]
}

func (o *keptLoserEnds) racesLost(p string) int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.lost[p]
}

// docs/operations.md: router_attempts_total counts "attempts ended" by
// outcome; docs/race.md ("Late results"): "keep_losers: true lets them finish
// to observe them, and they end lost", and the metrics count an attempt's
// end "as stored". A loser kept running after the win whose own first-byte
// timeout then fires is stored `lost` (FinishAttempt's unknownUnlessEndedSQL:
// its job has succeeded), and is counted so, not as an `unknown` attempt
// that does not exist in the database. It had no valid answer, so it lost no
// race (router_races_lost_total), and its timeout is still its target's
// failure for the breaker. Found by review (rrace8 F1).
func TestKeptLoserCountedAsStored(t *testing.T) {
	release := make(chan struct{})
	obs := &keptLoserEnds{provider: "primary", states: map[string]string{}, lost: map[string]int{}, ended: make(chan struct{})}
	adm := &outcomes{got: map[string][]race.Outcome{}}
	b := setupObserved(t, race.Route{HedgeAfter: 10 * time.Millisecond, KeepLosers: true}, adm, obs,
		provSpec{name: "primary", respond: func(int, *providers.Request) providers.Step {
			<-release // ends only after the hedge has won
			return providers.Step{Error: &providers.Error{Kind: providers.KindTimeout, OutcomeUnknown: true,
				Message: "no response byte before the first-byte timeout"}}
		}},
		provSpec{name: "fallback", respond: ok(validTriage)},
	)
	job := b.submit(t)
	if j := b.waitSettled(t, job.ID); j.State != store.JobSucceeded {
		t.Fatalf("set-up: job %s", j.State)
	}
	close(release)
	<-obs.ended
	b.stop()
	j := b.job(t, job.ID)
	stored := attemptBy(j, "primary").State
	if stored != store.AttemptLost {
		t.Fatalf("set-up: kept loser stored %s, want lost", stored)
	}
	if got := obs.state("primary"); got != stored {
		t.Errorf("kept loser stored %q, but the Observer (router_attempts_total outcome) was told %q", stored, got)
	}
	if n := obs.racesLost("primary"); n != 0 {
		t.Errorf("kept loser with no answer counted as %d lost race(s), want none: it had no valid answer", n)
	}
	if got := adm.of("primary"); len(got) != 1 || got[0] != race.OutcomeFailure {
		t.Errorf("primary's breaker heard %v, want one failure (%v): its first-byte timeout is its target's", got, race.OutcomeFailure)
	}
}
