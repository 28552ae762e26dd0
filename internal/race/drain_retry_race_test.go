package race_test

import (
	"context"
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/routerhq/router/internal/prompt"
	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/race"
	"github.com/routerhq/router/internal/racetest"
	"github.com/routerhq/router/internal/store"
)

// docs/operations.md (Shutdown, 5): a job whose race is not over — "a retry
// the drain dropped" — is handed over, not settled. The only target fails
// with a 500 (max_retries 1): a retry is scheduled, and SIGTERM comes as it
// is (hooked on the "retrying on the same provider" log line), so the retry
// timer and the drain are both ready and the orchestrator's select picks one
// at random. Whichever it picks, the dropped retry must hand the job over.
// (Found in review: when the select picked the timer, the retry was dropped
// without being remembered, the drain case found none to hand over, and the
// job was settled failed although its retry was never made. Each runner
// drains once: one job per runner, repeated so that the coin comes up
// "timer" at least once but for a chance of 2^-16.)
func TestRetryDroppedByTheDrainIsHandedOver(t *testing.T) {
	live := racetest.New(t, racetest.Options{LeaseOwner: "replica-live",
		Providers: []racetest.Provider{{Name: "primary", Respond: racetest.OK(validTriage)}}})
	prompts, err := prompt.LoadDir(racetest.PromptsDir())
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for i := range 16 {
		owner := fmt.Sprintf("replica-stopping-%d", i)
		scripted := providers.NewScripted(providers.ScriptedConfig{Name: "primary", Model: "primary-model",
			Respond: func(int, *providers.Request) providers.Step { return providers.Step{Status: 500} }})
		var r *race.Runner
		r = race.New(race.Config{
			Store: live.Store, Listener: live.Listener, Prompts: prompts, LeaseOwner: owner, Lease: 30 * time.Second,
			Targets: map[string]*race.Target{"primary": {Provider: scripted, Model: "primary-model", ContextWindow: 128000, Timeout: time.Minute, MaxRetries: 1}},
			Routes:  map[string]*race.Route{"default": {Providers: []string{"primary"}, MaxInflight: 2, MaxAttempts: 4}},
			Backoff: race.Backoff{Base: time.Nanosecond, Cap: time.Nanosecond},
			Log:     slog.New(onLog{msg: "retrying on the same provider", fn: func() { r.Drain(time.Minute) }}),
		})
		job := live.Create(t, owner)
		r.Submit(job)
		sctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		r.Stop(sctx)
		cancel()
		j := live.Job(t, job.ID)
		if j.State == store.JobFailed {
			t.Fatalf("run %d: job settled %s (%v) with attempts %s: the retry the drain dropped was never made, yet the job was failed instead of handed over",
				i, j.State, derefString(j.Error), roles(j))
		}
	}
}
