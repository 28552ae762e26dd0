package breaker_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/routerhq/router/internal/breaker"
	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/race"
	"github.com/routerhq/router/internal/store"
)

// docs/operations.md, GET /v1/providers: stats' "success rate uses the
// breaker's rule (won, lost and caller errors are successes; provider
// failures, invalid output and unknown outcomes are failures …)". An attempt
// that times out with no response byte while a hedge is in flight ends
// `unknown` (its breaker counts a failure at once). When the hedge then wins,
// the win settles the job's unknown siblings as `lost` (store's
// settleSiblingsSQL), keeping their error ({"kind": "timeout",
// "outcome_unknown": true}) but with no "breaker": "failure" mark — the mark
// the F1 fix (unknownEndErrorSQL) adds only when the unknown end is recorded
// after the job ended. providerStatsSQL then counts the stored `lost` as a
// success: a target that never answers shows success_rate 1 while its
// breaker opens on those very attempts.
func TestProviderStatsCountUnknownSettledLostByWinAsFailure(t *testing.T) {
	set := breaker.New(map[string]breaker.Settings{
		"primary":  {ConsecutiveFailures: 100, OpenFor: time.Minute},
		"fallback": {ConsecutiveFailures: 100, OpenFor: time.Minute},
	}, breaker.Options{})
	defer set.Close()
	obs := &endsOf{provider: "primary", ended: make(chan struct{})}
	hedged := make(chan struct{})
	b := setupRace(t, race.Route{HedgeAfter: 10 * time.Millisecond}, set, obs,
		provSpec{name: "primary", respond: func(int, *providers.Request) providers.Step {
			<-hedged // the hedge is in flight; then this call's own first-byte timeout
			return providers.Step{Error: &providers.Error{Kind: providers.KindTimeout, OutcomeUnknown: true,
				Message: "no response byte before the first-byte timeout"}}
		}},
		provSpec{name: "fallback", respond: func(int, *providers.Request) providers.Step {
			close(hedged)
			<-obs.ended // answers after the primary ended unknown
			return providers.Step{Output: validTriage}
		}},
	)
	job := b.submit(t)
	j := b.waitSettled(t, job.ID)
	if j.State != store.JobSucceeded {
		t.Fatalf("set-up: job %s (%v)", j.State, j.Error)
	}
	b.Stop()
	j = b.Job(t, job.ID)
	var a *store.Attempt
	for i := range j.Attempts {
		if j.Attempts[i].Provider == "primary" {
			a = &j.Attempts[i]
		}
	}
	if a == nil {
		t.Fatal("set-up: no primary attempt")
	}
	var failures uint32
	for _, s := range set.Snapshot() {
		if s.Provider == "primary" {
			failures = s.Counts.TotalFailures
		}
	}
	if failures != 1 {
		t.Fatalf("set-up: primary's breaker counted %d failures, want 1 (its unknown end)", failures)
	}
	stats, err := b.Store.ProviderStats(context.Background(), time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	p := stats["primary"]
	rate := "null"
	if p.SuccessRate != nil {
		rate = fmt.Sprint(*p.SuccessRate)
	}
	if p.Failed != 1 || p.Succeeded != 0 {
		t.Errorf("primary: /v1/providers stats say succeeded=%d failed=%d success_rate=%s for an attempt that timed out with no byte "+
			"and that its breaker counted as a failure (stored %s, error %s); want succeeded=0 failed=1, as the breaker counts it",
			p.Succeeded, p.Failed, rate, a.State, a.Error)
	}
}

// The documented way out of an `unknown` job — "Resolve it …, or cancel the
// job" — erases the failure from /v1/providers as well: CancelJob settles the
// unknown attempt `cancelled`, keeping its error (no "breaker": "failure"
// mark), and providerStatsSQL counts a cancelled attempt in neither column.
// The breaker counted the timeout as a failure when the attempt ended.
func TestProviderStatsCountUnknownCancelledAsFailure(t *testing.T) {
	set := breaker.New(map[string]breaker.Settings{
		"primary": {ConsecutiveFailures: 100, OpenFor: time.Minute},
	}, breaker.Options{})
	defer set.Close()
	b := setupRace(t, race.Route{}, set, nil,
		provSpec{name: "primary", respond: func(int, *providers.Request) providers.Step {
			return providers.Step{Error: &providers.Error{Kind: providers.KindTimeout, OutcomeUnknown: true,
				Message: "no response byte before the first-byte timeout"}}
		}},
	)
	job := b.submit(t)
	j := b.waitSettled(t, job.ID)
	if j.State != store.JobUnknown {
		t.Fatalf("set-up: job %s, want unknown", j.State)
	}
	if err := b.Store.CancelJob(context.Background(), j.Owner, j.ID); err != nil {
		t.Fatal(err)
	}
	b.Stop()
	j = b.Job(t, job.ID)
	var failures uint32
	for _, s := range set.Snapshot() {
		if s.Provider == "primary" {
			failures = s.Counts.TotalFailures
		}
	}
	if failures != 1 {
		t.Fatalf("set-up: primary's breaker counted %d failures, want 1 (its unknown end)", failures)
	}
	stats, err := b.Store.ProviderStats(context.Background(), time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	p := stats["primary"]
	if p.Failed != 1 {
		t.Errorf("primary: /v1/providers stats say attempts=%d succeeded=%d failed=%d cancelled=%d for an attempt that timed out with no byte, "+
			"counted as a failure by its breaker, whose unknown job was then cancelled (stored %s, error %s); want failed=1, as the breaker counts it",
			p.Attempts, p.Succeeded, p.Failed, p.Cancelled, j.Attempts[0].State, j.Attempts[0].Error)
	}
}
