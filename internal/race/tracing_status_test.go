package race_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/routerhq/router/internal/prompt"
	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/race"
	"github.com/routerhq/router/internal/racetest"
	"github.com/routerhq/router/internal/store"
)

// recordSpans records every span in memory until the test ends.
func recordSpans(t *testing.T) *tracetest.InMemoryExporter {
	t.Helper()
	before := otel.GetTracerProvider()
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	otel.SetTracerProvider(tp)
	t.Cleanup(func() { otel.SetTracerProvider(before); _ = tp.Shutdown(context.Background()) })
	return exp
}

// spanAttrs are a span's attributes by key.
func spanAttrs(s tracetest.SpanStub) map[attribute.Key]attribute.Value {
	m := map[attribute.Key]attribute.Value{}
	for _, kv := range s.Attributes {
		m[kv.Key] = kv.Value
	}
	return m
}

// jobSpans are the ended spans of job id (its own and its attempts'), by name.
func jobSpans(exp *tracetest.InMemoryExporter, id string) map[string]tracetest.SpanStub {
	out := map[string]tracetest.SpanStub{}
	for _, s := range exp.GetSpans() {
		if spanAttrs(s)["router.job.id"].AsString() == id {
			out[s.Name] = s
		}
	}
	return out
}

// A hedge loser the router cancelled once the hedge won is no error: its
// span's status stays unset (it was Error, with "call cancelled by the
// router"), as router_attempt_errors_total does not count it; its outcome
// still says cancelled. Found by review.
func TestHedgeLoserSpanStatusIsUnset(t *testing.T) {
	exp := recordSpans(t)
	b := racetest.New(t, racetest.Options{Route: race.Route{HedgeAfter: 10 * time.Millisecond}, Providers: []racetest.Provider{
		{Name: "primary", Respond: racetest.Hang},
		{Name: "fallback", Respond: racetest.OK(racetest.ValidTriage)},
	}})
	id := b.Submit(t).ID
	if j := b.WaitSettled(t, id); j.State != store.JobSucceeded {
		t.Fatalf("precondition: job %s", j.State)
	}
	b.Stop() // every span has ended
	spans := jobSpans(exp, id)
	loser, ok := spans["chat primary-model"]
	if !ok {
		t.Fatalf("no span of the primary's attempt: %v", spans)
	}
	a := spanAttrs(loser)
	if a["router.attempt.outcome"].AsString() != store.AttemptCancelled || a["router.attempt.role"].AsString() != store.RolePrimary {
		t.Fatalf("precondition: the primary's span %v", loser.Attributes)
	}
	if loser.Status.Code != codes.Unset {
		t.Errorf("the hedge loser's span status is %v %q, want Unset", loser.Status.Code, loser.Status.Description)
	}
	if w := spans["chat fallback-model"]; spanAttrs(w)["router.attempt.outcome"].AsString() != store.AttemptWon || w.Status.Code != codes.Unset {
		t.Errorf("the hedge's span: %v %v", w.Status, w.Attributes)
	}
}

// So is an attempt of a job its caller cancelled.
func TestCancelledJobAttemptSpanStatusIsUnset(t *testing.T) {
	exp := recordSpans(t)
	called := make(chan struct{})
	b := racetest.New(t, racetest.Options{Providers: []racetest.Provider{
		{Name: "primary", Respond: racetest.Hang, OnCall: func(int, *providers.Request) { close(called) }},
	}})
	job := b.SubmitUnplanned(t)
	<-called
	if err := b.Store.CancelJob(context.Background(), job.Owner, job.ID); err != nil {
		t.Fatal(err)
	}
	b.WaitSettled(t, job.ID)
	b.Stop()
	s, ok := jobSpans(exp, job.ID)["chat primary-model"]
	if !ok || spanAttrs(s)["router.attempt.outcome"].AsString() != store.AttemptCancelled {
		t.Fatalf("precondition: the attempt's span %v", s.Attributes)
	}
	if s.Status.Code != codes.Unset {
		t.Errorf("the cancelled job's attempt span status is %v %q, want Unset", s.Status.Code, s.Status.Description)
	}
}

// refuseAll is a conformance gate that admits no target.
type refuseAll struct{}

func (refuseAll) AllowModel(context.Context, string, string, *prompt.Prompt, string) (bool, string) {
	return false, "failed its conformance run"
}

// A job that fails before any attempt (here: the conformance gate refuses
// every target) has a span too, with its id, its state, why, and an Error
// status: it started only once an attempt was about to, so nothing in a trace
// carried such a job's router.job.id. Found by review.
func TestJobFailedBeforeAnyAttemptHasASpan(t *testing.T) {
	exp := recordSpans(t)
	b := racetest.New(t, racetest.Options{Gate: refuseAll{}, Providers: []racetest.Provider{
		{Name: "primary", Respond: racetest.OK(racetest.ValidTriage)},
	}})
	job := b.SubmitUnplanned(t)
	if j := b.WaitSettled(t, job.ID); j.State != store.JobFailed || len(j.Attempts) != 0 {
		t.Fatalf("precondition: job %s with %d attempts, want failed before any", j.State, len(j.Attempts))
	}
	b.Stop()
	s, ok := jobSpans(exp, job.ID)["router.job triage"]
	if !ok {
		t.Fatalf("no span of the job that failed before any attempt (%d spans recorded)", len(exp.GetSpans()))
	}
	a := spanAttrs(s)
	if a["router.job.state"].AsString() != store.JobFailed || s.Status.Code != codes.Error {
		t.Errorf("the job's span: state %q, status %v", a["router.job.state"].AsString(), s.Status)
	}
	if why := a["router.job.reason"].AsString(); why == "" || !strings.Contains(why, "failed its conformance run") {
		t.Errorf("the job's span says %q of why it failed", why)
	}
}
