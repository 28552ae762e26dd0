package race_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/routerhq/router/internal/prompt"
	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/race"
	"github.com/routerhq/router/internal/racetest"
	"github.com/routerhq/router/internal/store"
)

// staleFallbackGate refuses the fallback as the conformance gate refuses a
// target whose pass aged out (or whose results cannot be read for a moment).
type staleFallbackGate struct{}

func (staleFallbackGate) AllowModel(_ context.Context, provider, _ string, _ *prompt.Prompt, _ string) (bool, string) {
	if provider == "fallback" {
		return false, "last pass is 7 days old (conformance.max_age is 7 days; run `router conformance run --provider fallback --prompt triage`)"
	}
	return true, ""
}

// docs/conformance.md (The gate): "A retry goes to a target the job has
// already tried, which the gate admitted then, so retries are not asked
// again: a pass that expires while a job runs does not stop that job's
// retries on the target, and a job that resumes (adopted after a crash or a
// drain, or after a resolution) asks again for each target it has not tried
// in its current round." Here the fallback was tried in the round (the gate
// admitted it then), failed with a 429 with retries left, and the job was
// handed over by a drain while that retry was due. Its pass expires before the
// adopter resumes the job: the adopter asks the gate again about the tried
// fallback too, drops it from the candidates, and so never resumes its retry:
// the job fails instead of being retried on the fallback.
func TestResumedJobKeepsTheRetryOfATriedFallbackWhosePassExpired(t *testing.T) {
	obs := newHoldFinished(2)
	b := setupObserved(t, race.Route{}, nil, obs,
		provSpec{name: "primary", respond: func(int, *providers.Request) providers.Step { return providers.Step{Status: 500} }},
		provSpec{name: "fallback", maxRetries: 3, respond: func(int, *providers.Request) providers.Step {
			return providers.Step{Status: 429, RetryAfter: 100 * time.Millisecond}
		}})
	job := b.submit(t)
	drainWhileHeld(t, b, obs, job.ID, 2) // primary failed, fallback's failover failed with its retry due

	other := racetest.New(t, racetest.Options{DB: b.db, LeaseOwner: "replica-2", Gate: staleFallbackGate{}, Providers: []racetest.Provider{
		{Name: "primary", Respond: func(int, *providers.Request) providers.Step { return providers.Step{Status: 500} }},
		{Name: "fallback", MaxRetries: 3, Respond: racetest.OK(validTriage)}}})
	other.Runner.RecoverOnce(context.Background(), 10)
	j := other.WaitSettled(t, job.ID)
	var roles []string
	for _, a := range j.Attempts {
		roles = append(roles, a.Provider+"/"+a.Role+"/"+a.State)
	}
	if j.State != store.JobSucceeded {
		t.Fatalf("adopted job %s with attempts [%s]; want the fallback's due retry resumed and won (a retry is not asked again).\nerror: %s",
			j.State, strings.Join(roles, ", "), derefString(j.Error))
	}
}
