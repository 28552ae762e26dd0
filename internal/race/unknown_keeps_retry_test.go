package race_test

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/race"
	"github.com/routerhq/router/internal/store"
)

// unknownAfterRetry hears the attempts' ends: the fallback's (its retry is
// scheduled as it reaches the race) lets the primary end, and the primary's,
// recorded unknown, is held until released, the race not having seen it.
type unknownAfterRetry struct {
	holdFinished
	fallbackEnded chan struct{}
	once          sync.Once
}

func (u *unknownAfterRetry) AttemptFinished(provider, role, state string, kind providers.Kind, latency time.Duration, usage providers.Usage) {
	switch provider {
	case "fallback":
		u.once.Do(func() { close(u.fallbackEnded) })
	case "primary":
		close(u.held)
		<-u.release
	}
}

// unknownRetryAfter is the fallback's Retry-After: its retry must still be
// pending when the primary's end reaches the race.
const unknownRetryAfter = 3 * time.Second

// SPEC §6.7, §6.9; docs/race.md: an unknown attempt blocks new attempts only
// while the database says it is unknown. The primary is silent and hedged on
// the fallback, which fails transiently: its retry waits out a Retry-After.
// The primary then goes unknown, and is resolved `failed` before the race
// learns it. Nothing blocks the job, so the fallback's pending retry runs and
// answers — it was dropped when the unknown end arrived, and the race failed
// over to the third target instead, the fallback's retry lost.
func TestUnknownEndOfResolvedAttemptKeepsPendingRetry(t *testing.T) {
	var early atomic.Bool // the retry started before the primary's end was released: the set-up did not hold
	obs := &unknownAfterRetry{holdFinished: holdFinished{held: make(chan struct{}), release: make(chan struct{})},
		fallbackEnded: make(chan struct{})}
	b := setupObserved(t, race.Route{HedgeAfter: 10 * time.Millisecond, MaxInflight: 2, MaxAttempts: 5}, nil, obs,
		provSpec{name: "primary", respond: func(int, *providers.Request) providers.Step {
			<-obs.fallbackEnded // silent until its hedge has failed
			return providers.Step{Error: &providers.Error{Kind: providers.KindTimeout, OutcomeUnknown: true,
				Message: "no response byte before the first-byte timeout"}}
		}},
		provSpec{name: "fallback", maxRetries: 1, respond: func(call int, _ *providers.Request) providers.Step {
			if call == 1 {
				// Long enough for the retry to be still pending when the
				// primary's end reaches the race (a few writes later).
				return providers.Step{Status: 503, RetryAfter: unknownRetryAfter}
			}
			select {
			case <-obs.release:
			default:
				early.Store(true)
			}
			return providers.Step{Output: validTriage}
		}},
		provSpec{name: "third", respond: ok(validTriage)},
	)
	job := b.submit(t)
	<-obs.held // the primary's attempt is recorded unknown; the race has not seen it
	if _, err := b.st.ResolveAttempt(t.Context(), store.Resolution{JobID: job.ID, Seq: 1, Outcome: "failed", Note: "reconciliation: no record"}); err != nil {
		t.Fatal(err)
	}
	close(obs.release)

	j := b.waitSettled(t, job.ID)
	if early.Load() {
		t.Fatalf("set-up: the fallback's retry started before the primary's unknown end reached the race; raise unknownRetryAfter")
	}
	if j.State != store.JobSucceeded || b.prov["fallback"].Calls() != 2 || b.prov["third"].Calls() != 0 {
		t.Fatalf("job %s (%s), attempts %v, fallback called %d times, third %d: want the fallback's pending retry to answer (2, 0)",
			j.State, derefString(j.Error), attemptStates(j), b.prov["fallback"].Calls(), b.prov["third"].Calls())
	}
	if a := j.Attempts[len(j.Attempts)-1]; a.Provider != "fallback" || a.Role != store.RoleRetry || a.State != store.AttemptWon {
		t.Fatalf("last attempt %s/%s/%s, want the fallback's retry, won", a.Provider, a.Role, a.State)
	}
}
