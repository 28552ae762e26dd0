package race_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/routerhq/router/internal/chat"
	"github.com/routerhq/router/internal/race"
	"github.com/routerhq/router/internal/racetest"
	"github.com/routerhq/router/internal/store"
)

// chatJobSending creates a chat job on the default route whose request names
// model (sent to the targets in place of their own), held by owner, and
// hands it to the runner.
func chatJobSending(t *testing.T, b *racetest.Bundle, owner, model string, n int) *store.Job {
	t.Helper()
	input := json.RawMessage(fmt.Sprintf(`{"model":%q,"messages":[{"role":"user","content":"Say hello."}]}`, model))
	op := chat.Operation("default")
	fp, err := store.Fingerprint(op, "", "default", input)
	if err != nil {
		t.Fatal(err)
	}
	job, created, err := b.Store.CreateJob(context.Background(), store.NewJob{
		Owner: "acme", Operation: op, IdempotencyKey: fmt.Sprintf("ttfb-%s-%d", model, n), Fingerprint: fp,
		Route: "default", Input: input, LeaseOwner: owner, LeaseFor: 30 * time.Second,
	})
	if err != nil || !created {
		t.Fatalf("create job: %v created=%v", err, created)
	}
	return job
}

// Adaptive hedging learns each target's times to first byte per model sent
// (SPEC §15: statistics are per target, provider × model), as breakers are
// kept: a route's `models` sending a fast model and a slow reasoning model to
// the same provider must not give the slow one the fast one's p95, which
// would hedge every one of its jobs far too soon. The fast model's history
// gives its own jobs hedge_min; a job sending a model with no history of its
// own still gets hedge_max. It used to get the fast model's. Found by review.
func TestAdaptiveHedgeDelayIsPerModelSent(t *testing.T) {
	const owner = "ttfb-runner"
	b := racetest.New(t, racetest.Options{
		LeaseOwner: owner,
		// A minute's first-byte budget or more: hedge_max is not clamped by it.
		Route: race.Route{AdaptiveHedge: true, HedgeMin: time.Minute, HedgeMax: 2 * time.Minute},
		Providers: []racetest.Provider{
			{Name: "primary", Respond: racetest.OK("hello"), Timeout: time.Hour},
			{Name: "fallback", Respond: racetest.OK("hello"), Timeout: time.Hour},
		}})
	// Enough answered jobs sending the fast model for its p95 to be trusted
	// (well under hedge_min: scripted answers come at once).
	for i := range 12 {
		j := chatJobSending(t, b, owner, "fast-model", i)
		b.Runner.Submit(j)
		if s := b.WaitSettled(t, j.ID); s.State != store.JobSucceeded || s.Attempts[0].Provider != "primary" || s.Attempts[0].Model != "fast-model" {
			t.Fatalf("seeding job %d: %s %v %s, want it won by primary sending fast-model", i, s.State, derefString(s.Error), attemptsOf(s))
		}
	}
	fast := chatJobSending(t, b, owner, "fast-model", 100)
	if d := b.Runner.HedgeDelayOf(t, fast, "primary"); d != time.Minute {
		t.Fatalf("a job sending the fast model hedges primary after %s, want hedge_min (1m0s) from its history", d)
	}
	slow := chatJobSending(t, b, owner, "slow-reasoning-model", 100)
	if d := b.Runner.HedgeDelayOf(t, slow, "primary"); d != 2*time.Minute {
		t.Fatalf("a job sending another model to primary hedges after %s, want hedge_max (2m0s): that model has no history of its own", d)
	}
}
