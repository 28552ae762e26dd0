package race

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/routerhq/router/internal/store"
)

// openFallbackAC is a circuit breaker set whose fallback's breaker is open,
// its state shown to routing, admitting again in a second; the others admit.
type openFallbackAC struct{}

func (openFallbackAC) Admit(p string) (func(Outcome), bool, string) {
	if p == "fallback" {
		return nil, false, "circuit breaker open"
	}
	return func(Outcome) {}, true, ""
}

func (openFallbackAC) State(p string) (bool, string) {
	if p == "fallback" {
		return false, "circuit breaker open"
	}
	return true, ""
}

func (openFallbackAC) AdmitsIn(p string) (time.Duration, bool) {
	if p == "fallback" {
		return time.Second, true
	}
	return 0, true
}

// breakerWaitingRace is a race whose primary was tried and whose fallback's
// breaker refused it at the plan (deferred): left with nothing in flight, it
// would wait for that breaker (waitForBreakers).
func breakerWaitingRace() *orchestrator {
	return &orchestrator{
		r:     &Runner{cfg: Config{Admission: openFallbackAC{}}},
		job:   &store.Job{ID: "job", Route: "default"},
		route: &Route{Providers: []string{"primary", "fallback"}},
		log:   slog.New(slog.NewTextHandler(io.Discard, nil)),
		decisions: []Decision{
			{Provider: "primary", Eligible: true},
			{Provider: "fallback", Reason: "circuit breaker open", Cause: CauseBreaker},
		},
		byBreaker:      map[string]string{"fallback": "fallback"},
		candidates:     []string{"primary", "fallback"},
		used:           map[string]bool{"primary": true},
		reasons:        map[string]string{"primary": "primary: cancelled"},
		retries:        map[string]int{},
		breakerRefused: map[string]string{},
		breakerNoted:   map[string]bool{},
	}
}

// A job cancelled while its race ran ends: its run does not wait for a
// circuit breaker (o.breakerWait, which runJob turns into a run of the job
// later and a lease released "for" the wait) as a race left with only
// breaker-refused targets does. It did: a pointless timer and re-run of a
// cancelled job, and its run did not settle it (Publish the cancellation).
func TestCancelledRaceDoesNotWaitForABreaker(t *testing.T) {
	if o := breakerWaitingRace(); !o.waitForBreakers(context.Background()) || o.breakerWait <= 0 {
		t.Fatalf("set-up: a live race waits %v for the fallback's breaker, want it to wait", o.breakerWait)
	}
	ctx, cancel := context.WithCancelCause(context.Background())
	cancel(errJobCancelled)
	o := breakerWaitingRace()
	if o.waitForBreakers(ctx) || o.breakerWait != 0 {
		t.Fatalf("a cancelled job's race waits %v for a circuit breaker; want it to end (settled as it stands)", o.breakerWait)
	}
}
