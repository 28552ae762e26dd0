package race_test

import (
	"context"
	"testing"
	"time"

	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/race"
	"github.com/routerhq/router/internal/racetest"
	"github.com/routerhq/router/internal/store"
)

// Control for TestResumedJobKeepsTheRetryOfATriedFallbackWhosePassExpired: the same
// hand-over with no gate on the adopter resumes the fallback's retry and succeeds.
func TestResumedJobRetriesTheFallbackWithoutGate_control(t *testing.T) {
	obs := newHoldFinished(2)
	b := setupObserved(t, race.Route{}, nil, obs,
		provSpec{name: "primary", respond: func(int, *providers.Request) providers.Step { return providers.Step{Status: 500} }},
		provSpec{name: "fallback", maxRetries: 3, respond: func(int, *providers.Request) providers.Step {
			return providers.Step{Status: 429, RetryAfter: 100 * time.Millisecond}
		}})
	job := b.submit(t)
	drainWhileHeld(t, b, obs, job.ID, 2)
	other := racetest.New(t, racetest.Options{DB: b.db, LeaseOwner: "replica-2", Providers: []racetest.Provider{
		{Name: "primary", Respond: func(int, *providers.Request) providers.Step { return providers.Step{Status: 500} }},
		{Name: "fallback", MaxRetries: 3, Respond: racetest.OK(validTriage)}}})
	other.Runner.RecoverOnce(context.Background(), 10)
	if j := other.WaitSettled(t, job.ID); j.State != store.JobSucceeded {
		t.Fatalf("control: adopted job %s (%s)", j.State, derefString(j.Error))
	}
}
