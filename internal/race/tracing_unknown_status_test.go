package race_test

import (
	"context"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/codes"

	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/racetest"
	"github.com/routerhq/router/internal/store"
)

// A job left unknown (the caller got no answer: 504 outcome_unknown) is an
// error to whoever filters traces on the status: its span's status is Error,
// saying the outcome is unknown, as a failed job's is. It was Unset, so an
// error-trace filter missed every job the caller got no answer for.
func TestUnknownJobSpanStatusIsError(t *testing.T) {
	exp := recordSpans(t)
	b, job, _ := unknownOnHangingPrimary(t, racetest.ValidTriage)
	b.stop() // every span has ended
	s, ok := jobSpans(exp, job.ID)["router.job "+job.Operation]
	if !ok {
		t.Fatalf("no span of job %s: %v", job.ID, jobSpans(exp, job.ID))
	}
	if got := spanAttrs(s)["router.job.state"].AsString(); got != store.JobUnknown {
		t.Fatalf("precondition: router.job.state %q, want unknown", got)
	}
	if s.Status.Code != codes.Error || !strings.Contains(s.Status.Description, "outcome unknown") {
		t.Errorf("the unknown job's span status is %v %q, want Error saying its outcome is unknown", s.Status.Code, s.Status.Description)
	}
}

// A job its caller cancelled is the caller's choice, not an error: its span's
// status stays Unset.
func TestCancelledJobSpanStatusIsUnset(t *testing.T) {
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
	s, ok := jobSpans(exp, job.ID)["router.job "+job.Operation]
	if !ok || spanAttrs(s)["router.job.state"].AsString() != store.JobCancelled {
		t.Fatalf("precondition: the job's span %v", s.Attributes)
	}
	if s.Status.Code != codes.Unset {
		t.Errorf("the cancelled job's span status is %v %q, want Unset", s.Status.Code, s.Status.Description)
	}
}
