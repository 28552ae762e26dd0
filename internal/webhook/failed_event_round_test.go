package webhook_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/routerhq/router/internal/race"
	"github.com/routerhq/router/internal/store"
	"github.com/routerhq/router/internal/webhook"
)

// docs/api.md: a job.failed event's "job" is "the resource as that
// transition left it, even when the event is first sent later, after the job
// changed again (a failed job retried …): a job.failed event always shows a
// failed job", with its next_step "as GET /v1/jobs/{id} does". The outbox's
// snapshot (migration 0017) holds the job's state, version, error, times,
// result, completed_by and routing, but not attempt_base, which the caller's
// retry moves (RetryJobKeyed) and next_step reads (race.triedThisRound, via
// GatedNote): first tried after the retry, the body is built with the
// snapshot's round-1 attempts and routing but the retried job's attempt_base,
// so round 1's attempts no longer count as "tried this round". A target the
// gate refused a later role in the race after it had been tried (routing:
// CauseConformanceGate "at the plan or later in the race") is then reported
// as skipped by the gate — "a retry now would be gated the same way; once the
// operator has made them pass, …" — advice GET /v1/jobs/{id} never gave for
// the failed job, frozen into every redelivery.
//
// An event recorded before migration 0034 has no attempt_base in its
// snapshot: the store reads the retried job's round base as 0, and the body
// is the failed job's as well.
func TestFailedEventNextStepIsTheFailedRounds(t *testing.T) {
	t.Run("recorded", func(t *testing.T) { failedEventAfterRetry(t, false) })
	t.Run("recorded before 0034", func(t *testing.T) { failedEventAfterRetry(t, true) })
}

// failedEventAfterRetry delivers a job.failed event first tried after the
// caller's retry, its snapshot without attempt_base when before0034.
func failedEventAfterRetry(t *testing.T, before0034 bool) {
	var body []byte
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ = io.ReadAll(r.Body)
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(srv.Close)
	e := setup(t, srv.URL+"/hook", 5*time.Second)
	ctx := context.Background()
	j := e.newJob(t, "acme", "k1")
	// Round 1: p is tried as primary and fails; a later decision of the
	// race (p for another role) is refused by the conformance gate.
	routing := `[{"provider":"p","eligible":true},` +
		`{"provider":"p","eligible":false,"cause":"conformance_gate","reason":"no fresh passing conformance run of p for the fallback role"}]`
	a, err := e.st.CreateAttempt(ctx, store.NewAttempt{JobID: j.ID, Provider: "p", Role: store.RolePrimary,
		LeaseOwner: "test", Routing: []byte(routing)})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.st.FinishAttempt(ctx, a.ID, store.AttemptOutcome{State: store.AttemptFailed, Error: map[string]any{"kind": "server_error"}}); err != nil {
		t.Fatal(err)
	}
	if st, err := e.st.SettleJob(ctx, j.ID, "every provider failed"); err != nil || st != store.JobFailed {
		t.Fatalf("settle: %s %v", st, err)
	}
	failed := e.job(t, j.ID) // what GET /v1/jobs/{id} answered once it failed
	if step := race.NextStep(failed); strings.Contains(step, "conformance gate") {
		t.Fatalf("precondition: the failed job's next_step already names the gate: %s", step)
	}
	// The caller retries before the event's first try (a backlog, the
	// owner's pause, a restart): the retry moves attempt_base.
	if err := e.st.RetryJob(ctx, "acme", j.ID); err != nil {
		t.Fatal(err)
	}
	id := e.events(t, "acme", j.ID)[0].ID
	if before0034 {
		if _, err := e.db.Pool.Exec(ctx, `UPDATE job_events SET snapshot = snapshot #- '{job,attempt_base}' WHERE id = $1`, id); err != nil {
			t.Fatal(err)
		}
	}
	w := webhook.NewWorker(e.st, webhook.Config{Timeout: 5 * time.Second, Secrets: map[string]string{"acme": secret}})
	if err := w.Work(ctx, &river.Job[webhook.DeliverArgs]{JobRow: &rivertype.JobRow{ID: 1, Attempt: 1, MaxAttempts: 10000},
		Args: webhook.DeliverArgs{EventID: id, Owner: "acme"}}); err != nil {
		t.Fatalf("delivery: %v", err)
	}
	if want := wantBody("job.failed", failed); string(body) != want {
		t.Fatalf("job.failed, first tried after the caller's retry, is not the job as it failed:\nnext_step sent: %s\nnext_step then: %s",
			nextStepOf(string(body)), race.NextStep(failed))
	}
}

// nextStepOf is the next_step member of a delivered body, as sent.
func nextStepOf(body string) string {
	_, after, ok := strings.Cut(body, `"next_step":`)
	if !ok {
		return "(none)"
	}
	return strings.TrimSuffix(after, "}}")
}

// A job fails in its second round, where the conformance gate refused a target
// that only the first round had tried: its next_step names that target. The
// caller retries again before the event's first try; the body still names it,
// the round's own attempt_base recorded (migration 0034), neither the retried
// job's nor a guess.
func TestFailedEventOfASecondRoundNamesItsGatedTarget(t *testing.T) {
	var body []byte
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ = io.ReadAll(r.Body)
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(srv.Close)
	e := setup(t, srv.URL+"/hook", 5*time.Second)
	ctx := context.Background()
	j := e.newJob(t, "acme", "k1")
	fail := func(provider, routing string) *store.Job {
		t.Helper()
		a, err := e.st.CreateAttempt(ctx, store.NewAttempt{JobID: j.ID, Provider: provider, Role: store.RolePrimary,
			LeaseOwner: "test", Routing: []byte(routing)})
		if err != nil {
			t.Fatal(err)
		}
		if err := e.st.FinishAttempt(ctx, a.ID, store.AttemptOutcome{State: store.AttemptFailed, Error: map[string]any{"kind": "server_error"}}); err != nil {
			t.Fatal(err)
		}
		if st, err := e.st.SettleJob(ctx, j.ID, "every provider failed"); err != nil || st != store.JobFailed {
			t.Fatalf("settle: %s %v", st, err)
		}
		return e.job(t, j.ID)
	}
	fail("r", `[{"provider":"r","eligible":true}]`)
	if err := e.st.RetryJob(ctx, "acme", j.ID); err != nil {
		t.Fatal(err)
	}
	failed := fail("p", `[{"provider":"p","eligible":true},`+
		`{"provider":"r","eligible":false,"cause":"conformance_gate","reason":"no fresh passing conformance run of r"}]`)
	if step := race.NextStep(failed); !strings.Contains(step, "(r: no fresh passing conformance run of r)") {
		t.Fatalf("precondition: the failed job's next_step does not name r as gated: %s", step)
	}
	if err := e.st.RetryJob(ctx, "acme", j.ID); err != nil {
		t.Fatal(err)
	}
	var id string
	for _, ev := range e.events(t, "acme", j.ID) {
		if ev.JobVersion == failed.Version {
			id = ev.ID
		}
	}
	if id == "" {
		t.Fatalf("no event of version %d", failed.Version)
	}
	w := webhook.NewWorker(e.st, webhook.Config{Timeout: 5 * time.Second, Secrets: map[string]string{"acme": secret}})
	if err := w.Work(ctx, &river.Job[webhook.DeliverArgs]{JobRow: &rivertype.JobRow{ID: 1, Attempt: 1, MaxAttempts: 10000},
		Args: webhook.DeliverArgs{EventID: id, Owner: "acme"}}); err != nil {
		t.Fatalf("delivery: %v", err)
	}
	if want := wantBody("job.failed", failed); string(body) != want {
		t.Fatalf("the second round's job.failed, first tried after another retry, is not the job as it failed:\n"+
			"next_step sent: %s\nnext_step then: %s", nextStepOf(string(body)), race.NextStep(failed))
	}
}
