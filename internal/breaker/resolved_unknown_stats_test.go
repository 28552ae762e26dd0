package breaker_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/routerhq/router/internal/breaker"
	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/race"
	"github.com/routerhq/router/internal/store"
)

// docs/operations.md: /v1/providers' "Latency percentiles are of attempts
// that returned an answer (won, lost, invalid — not a lost one whose error
// says "breaker": "failure" or "outcome_unknown": true …), from send to the
// answer: the figure stored as the attempt's latency_ms". An attempt that
// timed out with no response byte (unknown) and is then resolved succeeded
// (an operator, or reconciliation through the provider's stored-completions
// lookup) becomes `won` with its error replaced by {"resolution": …}: the
// outcome_unknown marker is gone, and its latency_ms — the time to the
// router's own timeout, not to any answer — becomes the provider's p50.
func TestResolvedUnknownTimeoutIsNoAnswerLatency(t *testing.T) {
	set := breaker.New(map[string]breaker.Settings{
		"primary": {ConsecutiveFailures: 100, OpenFor: time.Minute},
	}, breaker.Options{})
	defer set.Close()
	b := setupRace(t, race.Route{}, set, nil,
		provSpec{name: "primary", respond: func(int, *providers.Request) providers.Step {
			return providers.Step{Latency: 300 * time.Millisecond, Error: &providers.Error{Kind: providers.KindTimeout, OutcomeUnknown: true,
				Message: "no response byte before the first-byte timeout"}}
		}},
	)
	job := b.submit(t)
	j := b.waitSettled(t, job.ID)
	if j.State != store.JobUnknown {
		t.Fatalf("set-up: job %s, want unknown", j.State)
	}
	if _, err := b.Store.ResolveAttempt(context.Background(), store.Resolution{Owner: j.Owner, JobID: j.ID, Seq: j.Attempts[0].Seq,
		Outcome: "succeeded", Result: json.RawMessage(validTriage), Note: "found in the provider's stored completions"}); err != nil {
		t.Fatal(err)
	}
	b.Stop()
	j = b.Job(t, job.ID)
	stats, err := b.Store.ProviderStats(context.Background(), time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	p := stats["primary"]
	if p.P50MS != nil {
		t.Errorf("primary: /v1/providers p50_ms=%v from an attempt whose stored latency is its time to the router's timeout "+
			"(no response byte; resolved succeeded afterwards: stored %s, latency_ms %v, error %s); want no answer latency from it",
			*p.P50MS, j.Attempts[0].State, *j.Attempts[0].LatencyMS, j.Attempts[0].Error)
	}
}
