package race_test

import (
	"context"
	"testing"
	"time"

	"github.com/routerhq/router/internal/breaker"
	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/race"
	"github.com/routerhq/router/internal/racetest"
	"github.com/routerhq/router/internal/store"
)

// endSignal is a provider whose calls report their end (the error) on ended.
type endSignal struct {
	inner *providers.Scripted
	ended chan error
}

func (e *endSignal) Name() string { return e.inner.Name() }
func (e *endSignal) Complete(ctx context.Context, req *providers.Request) (*providers.Response, error) {
	resp, err := e.inner.Complete(ctx, req)
	e.ended <- err
	return resp, err
}

// A hedge that wins at once is announced in memory (runAttempt, right after
// OfferCompletion), and the losers are cut (watchCancel) without waiting for
// the orchestrator. hedgeDue marked the silent attempt hedged only after
// starting the hedge, so a win announced in between (the scheduler's doing,
// under CI load) cut the half-open probe as a loser no hedge was started
// for: its outcome ignored instead of kept to its budget and counted. The
// hedge is held here right after its start while the win is announced.
func TestProbeMarkedHedgedBeforeTheHedgeStarts(t *testing.T) {
	adm, changes := watchedPrimary(t, breaker.Settings{ConsecutiveFailures: 1, OpenFor: 100 * time.Millisecond})
	primary := &endSignal{ended: make(chan error, 10), inner: providers.NewScripted(providers.ScriptedConfig{Name: "primary", Model: "primary-model",
		Respond: func(call int, _ *providers.Request) providers.Step {
			if call == 1 {
				return providers.Step{Status: 500}
			}
			return providers.Step{Latency: time.Second, Output: validTriage} // the probe: after the hedge's start
		}})}
	hedgeCalled := make(chan struct{}, 1)
	b := racetest.New(t, racetest.Options{Route: quickHedge, Admission: adm, Providers: []racetest.Provider{
		{Name: "primary", Adapter: primary, FirstByteTimeout: 10 * time.Second},
		{Name: "fallback", Respond: func(call int, _ *providers.Request) providers.Step {
			if call == 1 {
				return providers.Step{Output: validTriage}
			}
			return providers.Step{Hang: true}
		}, OnCall: func(call int, _ *providers.Request) {
			if call == 2 {
				hedgeCalled <- struct{}{}
			}
		}},
	}})
	if j := b.WaitSettled(t, b.Submit(t).ID); j.State != store.JobSucceeded {
		t.Fatalf("job 1 %s", j.State)
	}
	<-primary.ended
	if o := waitOutcome(t, adm.released); o != race.OutcomeFailure {
		t.Fatalf("the primary's 500 was reported %v", o)
	}
	waitStateChange(t, changes, breaker.StateOpen)
	waitStateChange(t, changes, breaker.StateHalfOpen)
	started, hold := make(chan struct{}), make(chan struct{})
	defer race.SetHedgeStartedHook(func(string) {
		close(started)
		<-hold
	})()
	j2 := b.Submit(t)
	<-started                                     // the hedge is launched; hedgeDue has not returned
	b.Listener.Publish(j2.ID, store.JobSucceeded) // as a hedge's win is announced
	o := waitOutcome(t, adm.released)             // hedgeDue still held
	close(hold)
	if o != race.OutcomeSuccess {
		t.Fatalf("the probe ended %v (1=failure, 2=ignored), its call %v: cut at once as a loser no hedge was started for", o, <-primary.ended)
	}
}
