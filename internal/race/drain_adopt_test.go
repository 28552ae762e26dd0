package race_test

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/routerhq/router/internal/prompt"
	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/race"
	"github.com/routerhq/router/internal/racetest"
	"github.com/routerhq/router/internal/store"
)

// onLog is a log handler that calls fn (once per record, synchronously, on
// the logging goroutine) for each record whose message is msg: a hook into a
// point of the runner that logs.
type onLog struct {
	msg string
	fn  func()
}

func (h onLog) Enabled(context.Context, slog.Level) bool { return true }
func (h onLog) Handle(_ context.Context, r slog.Record) error {
	if r.Message == h.msg {
		h.fn()
	}
	return nil
}
func (h onLog) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h onLog) WithGroup(string) slog.Handler      { return h }

// SPEC §17: a replica told to stop while its recovery pass is claiming
// orphans (the claim committed, the jobs not yet started) does not keep them:
// it will not run them, so their leases are given back at once and a live
// replica adopts them on its next pass — not after the leases expire.
// (Found in review: the claimed jobs stayed leased to the stopping replica
// for a whole lease.)
func TestOrphanClaimedAsTheDrainStartsIsGivenBack(t *testing.T) {
	live := racetest.New(t, racetest.Options{LeaseOwner: "replica-live",
		Providers: []racetest.Provider{{Name: "primary", Respond: racetest.OK(validTriage)}}})
	ctx := context.Background()
	orphan := live.Create(t, "dead-process")
	if _, err := live.DB.Pool.Exec(ctx, `UPDATE jobs SET lease_expires_at = now() - interval '1 second' WHERE id = $1`, orphan.ID); err != nil {
		t.Fatal(err)
	}

	// The stopping replica: SIGTERM arrives right after its claim committed,
	// when it logs the take-over and before it starts the job.
	prompts, err := prompt.LoadDir(racetest.PromptsDir())
	if err != nil {
		t.Fatal(err)
	}
	scripted := providers.NewScripted(providers.ScriptedConfig{Name: "primary", Model: "primary-model", Respond: racetest.OK(validTriage)})
	var stopping *race.Runner
	stopping = race.New(race.Config{
		Store: live.Store, Prompts: prompts, LeaseOwner: "replica-stopping", Lease: 30 * time.Second,
		Targets: map[string]*race.Target{"primary": {Provider: scripted, Model: "primary-model", ContextWindow: 128000, Timeout: time.Minute}},
		Routes:  map[string]*race.Route{"default": {Providers: []string{"primary"}, MaxInflight: 2, MaxAttempts: 4}},
		Log:     slog.New(onLog{msg: "recovery: taking over a job whose orchestrator stopped", fn: func() { stopping.Drain(0) }}),
	})
	stopping.RecoverOnce(ctx, 10)
	sctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	stopping.Stop(sctx)
	cancel()
	if n := scripted.Calls(); n != 0 {
		t.Fatalf("the stopping replica sent the job (%d calls)", n)
	}
	if owner := leaseOwner(t, &bundle{db: live.DB}, orphan.ID); owner != "" {
		t.Fatalf("the orphan's lease is held by %q after that replica stopped: a live replica must be able to adopt it now", owner)
	}
	live.Runner.RecoverOnce(ctx, 10)
	if j := live.WaitSettled(t, orphan.ID); j.State != store.JobSucceeded {
		t.Fatalf("orphan %s (%v): want it adopted and won by the live replica", j.State, derefString(j.Error))
	}
}

// finishedSignal is an observer that closes done when provider's attempt has
// ended (recorded in the database).
type finishedSignal struct {
	provider string
	done     chan struct{}
}

func (f *finishedSignal) AttemptFinished(provider, _, _ string, _ providers.Kind, _ time.Duration, _ providers.Usage) {
	if provider == f.provider {
		close(f.done) // once: the provider has one attempt here
	}
}
func (*finishedSignal) AttemptStarted(string, string) {}
func (*finishedSignal) RaceLost(string)               {}
func (*finishedSignal) HedgeStarted(string)           {}
func (*finishedSignal) JobSettled(string)             {}

// SPEC §17, §6.7: a job whose unknown attempt was resolved `failed` while its
// race went on is handed over when the router drains, like any job with
// nothing in flight and nothing blocking it — not failed with a provider
// still untried. (Found in review: draining skipped the check that the
// blocking attempt was still unknown, so the job was settled with the stale
// block: failed.)
func TestDrainHandsOverAJobWhoseUnknownAttemptWasResolved(t *testing.T) {
	fbCalled, fbRelease := make(chan struct{}), make(chan struct{})
	obs := &finishedSignal{provider: "primary", done: make(chan struct{})}
	b := setupObserved(t, race.Route{HedgeAfter: time.Nanosecond}, nil, obs,
		provSpec{name: "primary", respond: func(int, *providers.Request) providers.Step {
			<-fbCalled // the hedge is in flight
			return providers.Step{Error: &providers.Error{Kind: providers.KindTimeout, OutcomeUnknown: true, Message: "no answer"}}
		}},
		provSpec{name: "fallback", respond: func(int, *providers.Request) providers.Step {
			close(fbCalled)
			<-fbRelease
			return providers.Step{Status: 500}
		}},
		provSpec{name: "third", respond: ok(validTriage)},
	)
	ctx := context.Background()
	job := b.submit(t)
	<-obs.done // the primary's attempt is unknown; the fallback's hedge runs on
	if resume, err := b.st.ResolveAttempt(ctx, store.Resolution{JobID: job.ID, Seq: 1, Outcome: "failed", Note: "operator: no record"}); err != nil || resume {
		t.Fatalf("resolve: resume=%v err=%v", resume, err)
	}
	b.runner.Drain(0) // SIGTERM
	close(fbRelease)  // the hedge fails: nothing is in flight, nothing blocks
	b.stop()
	j := b.job(t, job.ID)
	if j.State != store.JobRunning {
		t.Fatalf("job %s (%v) after the drain: want it left running for another replica", j.State, derefString(j.Error))
	}
	if owner := leaseOwner(t, b, job.ID); owner != "" {
		t.Fatalf("the job's lease is still held by %q after the drain", owner)
	}
	if n := b.prov["third"].Calls(); n != 0 {
		t.Fatalf("the draining router started the third provider (%d calls)", n)
	}
	other := racetest.New(t, racetest.Options{DB: b.db, LeaseOwner: "replica-2", Route: race.Route{HedgeAfter: time.Nanosecond},
		Providers: []racetest.Provider{{Name: "primary", Respond: racetest.OK(validTriage)}, {Name: "fallback", Respond: racetest.OK(validTriage)},
			{Name: "third", Respond: racetest.OK(validTriage)}}})
	other.Runner.RecoverOnce(ctx, 10)
	j = other.WaitSettled(t, job.ID)
	if j.State != store.JobSucceeded || j.Attempts[len(j.Attempts)-1].Provider != "third" {
		t.Fatalf("adopted job %s (%v), attempts %+v: want it won on the third provider", j.State, derefString(j.Error), j.Attempts)
	}
	if other.Prov["primary"].Calls()+other.Prov["fallback"].Calls() != 0 {
		t.Fatal("the adopter sent the job again to a provider already tried")
	}
}
