package breaker_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/routerhq/router/internal/breaker"
	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/race"
)

// docs/operations.md, GET /v1/providers: "success rate uses the breaker's
// rule (won, lost and caller errors are successes; provider failures,
// invalid output and unknown outcomes are failures; cancellations count in
// neither)". The breaker does not count an answer that misses only the
// caller's own response_format; /v1/providers (and /dashboard, which shows
// the same stats) must not count it as the target's failure either, or one
// tenant's impossible schema shows a healthy target at 0% success.
func TestProviderStatsIgnoreCallersOwnSchema(t *testing.T) {
	set := breaker.New(map[string]breaker.Settings{
		"primary":  {ConsecutiveFailures: 100, OpenFor: time.Minute},
		"fallback": {ConsecutiveFailures: 100, OpenFor: time.Minute},
	}, breaker.Options{})
	defer set.Close()
	b := setupRace(t, race.Route{}, set, nil, callerSchemaProviders()...)
	callerSchemaJobs(t, b, 3)
	for _, s := range set.Snapshot() {
		if s.Counts.TotalFailures != 0 {
			t.Fatalf("precondition: breaker %s counted %d failures", s.Provider, s.Counts.TotalFailures)
		}
	}
	stats, err := b.Store.ProviderStats(context.Background(), time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"primary", "fallback"} {
		p := stats[name]
		if p.Failed != 0 || p.SuccessRate != nil {
			rate := "null"
			if p.SuccessRate != nil {
				rate = fmt.Sprint(*p.SuccessRate)
			}
			t.Errorf("%s: /v1/providers stats say failed=%d success_rate=%s for answers the breaker did not count (the caller's own schema); want failed=0, success_rate=null",
				name, p.Failed, rate)
		}
	}
}

// The same rule for an attempt the job's own deadline cut after the target
// had begun answering: the breaker does not count it ("a long answer met the
// route's deadline"), /v1/providers counts it as a failure.
func TestProviderStatsIgnoreDeadlineCutAfterAnswerBegan(t *testing.T) {
	set := breaker.New(map[string]breaker.Settings{
		"primary": {ConsecutiveFailures: 100, OpenFor: time.Minute},
	}, breaker.Options{})
	defer set.Close()
	// The deadline need not be short (the answer hangs until it comes), only
	// long enough for the primary to begin answering before it, on any
	// machine: cut first, the attempt is rightly the target's failure.
	b := setupRace(t, race.Route{Deadline: 2 * time.Second}, set, nil,
		provSpec{name: "primary", respond: func(int, *providers.Request) providers.Step {
			return providers.Step{Output: validTriage, Hang: true, HangAfterBytes: true}
		}})
	j := b.waitSettled(t, b.submit(t).ID)
	if len(j.Attempts) != 1 {
		t.Fatalf("precondition: %d attempts", len(j.Attempts))
	}
	for _, s := range set.Snapshot() {
		if s.Counts.TotalFailures != 0 {
			t.Fatalf("precondition: breaker %s counted %d failures", s.Provider, s.Counts.TotalFailures)
		}
	}
	stats, err := b.Store.ProviderStats(context.Background(), time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if p := stats["primary"]; p.Failed != 0 {
		t.Errorf("primary: /v1/providers stats count failed=%d (attempt %s, error %s) for an attempt the breaker did not count (cut by the job's deadline after the answer began); want 0",
			p.Failed, j.Attempts[0].State, j.Attempts[0].Error)
	}
}
