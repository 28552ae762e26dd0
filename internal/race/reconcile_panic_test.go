package race_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/race"
	"github.com/routerhq/router/internal/racetest"
	"github.com/routerhq/router/internal/store"
)

// panickyLookup is a scripted provider whose Lookup panics (an adapter bug on
// what a provider's lookup endpoint sent), counting its lookups.
type panickyLookup struct {
	*providers.Scripted
	lookups atomic.Int32
}

func (p *panickyLookup) Lookup(context.Context, string) (*providers.Response, bool, error) {
	p.lookups.Add(1)
	panic("lookup: unexpected answer")
}

// emptyLookup is a scripted provider whose Lookup says it found the request
// but returns no answer (nor an error): an adapter bug.
type emptyLookup struct {
	*providers.Scripted
	lookups atomic.Int32
}

func (p *emptyLookup) Lookup(context.Context, string) (*providers.Response, bool, error) {
	p.lookups.Add(1)
	return nil, true, nil
}

// unknownOn runs a job whose only target, adapter (hanging past its 50ms
// timeout), leaves its attempt unknown, and returns the bundle and the job.
func unknownOn(t *testing.T, adapter providers.Provider) (*racetest.Bundle, *store.Job) {
	t.Helper()
	b := racetest.New(t, racetest.Options{Route: race.Route{}, Providers: []racetest.Provider{
		{Name: "primary", Adapter: adapter, Timeout: 50 * time.Millisecond}}})
	j := b.WaitSettled(t, b.Submit(t).ID)
	if j.State != store.JobUnknown || len(j.Attempts) != 1 || j.Attempts[0].State != store.AttemptUnknown {
		t.Fatalf("job %s, attempts %+v: want it unknown on its hanging primary", j.State, j.Attempts)
	}
	return b, j
}

// assertStillUnknown checks that reconciliation left the job and its attempt
// unknown.
func assertStillUnknown(t *testing.T, b *racetest.Bundle, id string) {
	t.Helper()
	j := b.Job(t, id)
	if j.State != store.JobUnknown || len(j.Attempts) != 1 || j.Attempts[0].State != store.AttemptUnknown {
		t.Fatalf("after reconciliation: job %s, attempts %+v; want both still unknown", j.State, j.Attempts)
	}
}

// SPEC §17: a provider cannot crash the process. A panic in an adapter's
// Lookup killed the maintenance leader running reconciliation, then each new
// leader that looked the same attempt up. It leaves the attempt unknown, and
// the next pass looks it up again. Found by review.
func TestReconcileSurvivesPanickingLookup(t *testing.T) {
	p := &panickyLookup{Scripted: providers.NewScripted(providers.ScriptedConfig{Name: "primary", Respond: racetest.Hang})}
	b, j := unknownOn(t, p)
	b.Runner.RecoverOnce(context.Background(), 10)
	assertStillUnknown(t, b, j.ID)
	b.Runner.RecoverOnce(context.Background(), 10)
	assertStillUnknown(t, b, j.ID)
	if n := p.lookups.Load(); n != 2 {
		t.Fatalf("%d lookups, want one per pass", n)
	}
}

// A lookup that reports the request found without an answer panicked in
// reconciliation itself (reading the answer's usage); it too leaves the
// attempt unknown.
func TestReconcileSurvivesLookupFoundWithoutAnswer(t *testing.T) {
	p := &emptyLookup{Scripted: providers.NewScripted(providers.ScriptedConfig{Name: "primary", Respond: racetest.Hang})}
	b, j := unknownOn(t, p)
	b.Runner.RecoverOnce(context.Background(), 10)
	assertStillUnknown(t, b, j.ID)
	if n := p.lookups.Load(); n != 1 {
		t.Fatalf("%d lookups, want 1", n)
	}
}

// noAnswer is a scripted provider whose Complete returns neither an answer
// nor an error: an adapter bug.
type noAnswer struct{ *providers.Scripted }

func (noAnswer) Complete(context.Context, *providers.Request) (*providers.Response, error) {
	return nil, nil
}

// An adapter that returns neither an answer nor an error fails its attempt
// (adapter_panic) and the race fails over, instead of the judging of a
// missing answer panicking outside the adapter's guard and ending the
// process.
func TestAdapterReturningNothingFailsTheAttempt(t *testing.T) {
	b := racetest.New(t, racetest.Options{Route: race.Route{}, Providers: []racetest.Provider{
		{Name: "primary", Adapter: noAnswer{providers.NewScripted(providers.ScriptedConfig{Name: "primary"})}},
		{Name: "fallback", Respond: racetest.OK(validTriage)}}})
	j := b.WaitSettled(t, b.Submit(t).ID)
	p := racetest.AttemptOn(j, "primary")
	if j.State != store.JobSucceeded || p == nil || p.State != store.AttemptFailed || errorKind(t, p) != string(providers.KindAdapterPanic) {
		t.Fatalf("job %s, attempts %+v: want the primary failed (adapter_panic) and the fallback's win", j.State, j.Attempts)
	}
}
