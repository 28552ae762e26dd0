package race_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/routerhq/router/internal/race"
	"github.com/routerhq/router/internal/racetest"
	"github.com/routerhq/router/internal/store"
)

// openUntilAsked is a breaker set whose breakers refuse every provider until
// the runner asks when they admit again (race.AdmitDelay, as it does to
// schedule a run after a breaker wait): then they say "now" and admit from
// then on. No clock decides, so the job waits for a breaker exactly once.
type openUntilAsked struct{ closed atomic.Bool }

var _ race.AdmitDelay = (*openUntilAsked)(nil)

func (a *openUntilAsked) Admit(string) (func(race.Outcome), bool, string) {
	if !a.closed.Load() {
		return nil, false, "breaker open"
	}
	return func(race.Outcome) {}, true, ""
}

func (a *openUntilAsked) AdmitsIn(string) (time.Duration, bool) {
	a.closed.Store(true)
	return 0, true
}

func (a *openUntilAsked) State(string) (bool, string) {
	if !a.closed.Load() {
		return false, "breaker open"
	}
	return true, ""
}

// A job a traced request created and that waited for a circuit breaker runs
// again in the request's trace: its second run's span and its attempt's were
// in a root trace of their own, the request's holding only a router.job span
// ended "pending". Found by review.
func TestBreakerWaitKeepsTheRequestsTrace(t *testing.T) {
	exp := recordSpans(t)
	adm := &openUntilAsked{}
	b := racetest.New(t, racetest.Options{Admission: adm, Providers: []racetest.Provider{{Name: "primary", Respond: racetest.OK(racetest.ValidTriage)}}})
	tid, _ := trace.TraceIDFromHex("4bf92f3577b34da6a3ce929d0e0e4736")
	sid, _ := trace.SpanIDFromHex("00f067aa0ba902b7")
	parent := trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: sid, TraceFlags: trace.FlagsSampled, Remote: true})
	job := b.Create(t, "test-runner")
	b.Runner.SubmitNewContext(trace.ContextWithSpanContext(context.Background(), parent), job, nil)
	if j := b.WaitSettled(t, job.ID); j.State != store.JobSucceeded {
		t.Fatalf("precondition: job %s", j.State)
	}
	b.Stop()
	var runs, attempts int
	for _, s := range exp.GetSpans() {
		if spanAttrs(s)["router.job.id"].AsString() != job.ID {
			continue
		}
		switch s.Name {
		case "chat primary-model":
			attempts++
		case "router.job triage":
			runs++
			if s.Parent.SpanID() != sid {
				t.Errorf("run %d's span is a child of %s, not of the request's span %s", runs, s.Parent.SpanID(), sid)
			}
		}
		if s.SpanContext.TraceID() != tid {
			t.Errorf("span %q of the job is in trace %s, not the request's %s", s.Name, s.SpanContext.TraceID(), tid)
		}
	}
	if runs != 2 || attempts != 1 {
		t.Fatalf("precondition: %d job spans (want 2: the breaker wait's and the run after it), %d attempt spans", runs, attempts)
	}
}
