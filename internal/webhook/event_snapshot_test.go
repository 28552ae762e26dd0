package webhook_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/routerhq/router/internal/race"
	"github.com/routerhq/router/internal/store"
)

// The body of an event whose first try comes after the job changed again is
// the job as the transition left it (the snapshot the outbox trigger records,
// migration 0017), not as it is at the first try: here the job as read right
// after each transition, byte for byte.

// wantBody is the body an event of type typ carries for job j: the job as
// GET /v1/jobs/{id} answers it (race.AppendJob: a failed job's with its
// next_step).
func wantBody(typ string, j *store.Job) string {
	t, _ := json.Marshal(typ)
	return `{"type":` + string(t) + `,"job":` + string(race.AppendJob(nil, j)) + `}`
}

func (e *env) job(t *testing.T, id string) *store.Job {
	t.Helper()
	j, err := e.st.GetJobAny(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return j
}

// bodiesByType receives n deliveries and returns their bodies by event type,
// checking each one's signature and that its webhook-id is one of the job's
// events of that type.
func (e *env) bodiesByType(t *testing.T, rc *receiver, jobID string, n int) map[string]string {
	t.Helper()
	ids := map[string]string{}
	for _, ev := range e.events(t, "acme", jobID) {
		ids[ev.Type] = ev.ID
	}
	got := map[string]string{}
	for range n {
		r := rc.next(t)
		p := verified(t, r)
		if id := r.header.Get("webhook-id"); id != ids[p.Type] {
			t.Fatalf("a %s delivery has webhook-id %s, want %s", p.Type, id, ids[p.Type])
		}
		got[p.Type] = string(r.body)
	}
	return got
}

// A job fails, the caller retries it and a new attempt starts, and only then
// is job.failed first tried: it still shows the failed job (state, version,
// error, finish, key expiry, routing) with its one failed attempt, and its
// next_step is the failed job's: the round's attempt_base is recorded too
// (migration 0034), so the target the round tried and the conformance gate
// then refused for a later role is not named as skipped by the gate.
func TestFailedEventShowsTheJobAsItFailed(t *testing.T) {
	rc := newReceiver(t, func(int) int { return http.StatusOK })
	e := setup(t, rc.srv.URL, 5*time.Second)
	ctx := context.Background()
	j := e.newJob(t, "acme", "k1")
	routing := `[{"provider":"p","eligible":true},` +
		`{"provider":"p","eligible":false,"cause":"conformance_gate","reason":"no fresh passing conformance run of p for the fallback role"}]`
	a, err := e.st.CreateAttempt(ctx, store.NewAttempt{JobID: j.ID, Provider: "p", Role: store.RolePrimary,
		LeaseOwner: "test", Routing: []byte(routing)})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.st.FinishAttempt(ctx, a.ID, store.AttemptOutcome{State: store.AttemptFailed, Error: map[string]any{"kind": "x"}}); err != nil {
		t.Fatal(err)
	}
	if st, err := e.st.SettleJob(ctx, j.ID, "every provider failed"); err != nil || st != store.JobFailed {
		t.Fatalf("settle: %s %v", st, err)
	}
	failed := e.job(t, j.ID)
	if step := race.NextStep(failed); strings.Contains(step, "conformance gate") {
		t.Fatalf("precondition: the failed job's next_step names the gate: %s", step)
	}

	if err := e.st.RetryJob(ctx, "acme", j.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := e.st.CreateAttempt(ctx, store.NewAttempt{JobID: j.ID, Provider: "q", Role: store.RolePrimary,
		LeaseOwner: "test", Routing: []byte(`{"round":2}`)}); err != nil {
		t.Fatal(err)
	}
	if now := e.job(t, j.ID); now.State != store.JobRunning || now.Version == failed.Version || len(now.Attempts) != 2 {
		t.Fatalf("the retried job: state %s version %d (failed at %d), %d attempts", now.State, now.Version, failed.Version, len(now.Attempts))
	}

	e.start(t) // the first try of job.failed happens only now (a backlog, a restart)
	got := e.bodiesByType(t, rc, j.ID, 1)
	if want := wantBody("job.failed", failed); got["job.failed"] != want {
		t.Fatalf("job.failed delivered\n%s\nwant the job as it failed\n%s", got["job.failed"], want)
	}
	if evs := e.events(t, "acme", j.ID); evs[0].JobVersion != failed.Version {
		t.Fatalf("event job_version %d, the failed job's version %d", evs[0].JobVersion, failed.Version)
	}
	// Once the body is frozen the snapshot has served: the freeze drops it.
	var kept int
	if err := e.db.Pool.QueryRow(ctx, `SELECT count(*) FROM job_events WHERE job_id = $1 AND body IS NOT NULL AND snapshot IS NOT NULL`, j.ID).Scan(&kept); err != nil || kept != 0 {
		t.Fatalf("%d frozen events still hold their snapshot (%v)", kept, err)
	}
}

// A job goes unknown, an operator resolves its attempt as succeeded, and only
// then are the events first tried: job.unknown shows the unknown job (its
// attempt unknown, unpriced, no result) and job.succeeded the job that won;
// job.version orders them.
func TestUnknownEventShowsTheJobBeforeItsResolution(t *testing.T) {
	rc := newReceiver(t, func(int) int { return http.StatusOK })
	e := setup(t, rc.srv.URL, 5*time.Second)
	ctx := context.Background()
	j := e.newJob(t, "acme", "k1")
	a := e.unknownAttempt(t, j.ID)
	unknown := e.job(t, j.ID)
	if _, err := e.st.ResolveAttempt(ctx, store.Resolution{Owner: "acme", JobID: j.ID, Seq: a.Seq, Outcome: "succeeded",
		Result: json.RawMessage(`{"ok":1}`), Usage: map[string]any{"prompt_tokens": 1000, "completion_tokens": 2000},
		Note: "checked with the provider"}); err != nil {
		t.Fatal(err)
	}
	succeeded := e.job(t, j.ID)
	if succeeded.CostUSD == nil || succeeded.Attempts[0].State != store.AttemptWon {
		t.Fatalf("the resolved job: cost %v, attempt %s", succeeded.CostUSD, succeeded.Attempts[0].State)
	}

	e.start(t)
	got := e.bodiesByType(t, rc, j.ID, 2)
	if want := wantBody("job.unknown", unknown); got["job.unknown"] != want {
		t.Errorf("job.unknown delivered\n%s\nwant the job as it became unknown\n%s", got["job.unknown"], want)
	}
	if want := wantBody("job.succeeded", succeeded); got["job.succeeded"] != want {
		t.Errorf("job.succeeded delivered\n%s\nwant\n%s", got["job.succeeded"], want)
	}
	if unknown.Version >= succeeded.Version {
		t.Fatalf("versions %d (unknown) and %d (succeeded) do not order the events", unknown.Version, succeeded.Version)
	}
}

// An unknown job that the caller cancels: job.unknown still shows the attempt
// unknown (not cancelled) and the job unknown with its own error.
func TestUnknownEventShowsTheJobBeforeItsCancellation(t *testing.T) {
	rc := newReceiver(t, func(int) int { return http.StatusOK })
	e := setup(t, rc.srv.URL, 5*time.Second)
	j := e.newJob(t, "acme", "k1")
	e.unknownAttempt(t, j.ID)
	unknown := e.job(t, j.ID)
	if err := e.st.CancelJob(context.Background(), "acme", j.ID); err != nil {
		t.Fatal(err)
	}
	cancelled := e.job(t, j.ID)

	e.start(t)
	got := e.bodiesByType(t, rc, j.ID, 2)
	if want := wantBody("job.unknown", unknown); got["job.unknown"] != want {
		t.Errorf("job.unknown delivered\n%s\nwant the job as it became unknown\n%s", got["job.unknown"], want)
	}
	if want := wantBody("job.cancelled", cancelled); got["job.cancelled"] != want {
		t.Errorf("job.cancelled delivered\n%s\nwant\n%s", got["job.cancelled"], want)
	}
}

// unknownAttempt gives the running job jobID a priced attempt whose outcome
// is unknown and settles the job, which becomes unknown.
func (e *env) unknownAttempt(t *testing.T, jobID string) *store.Attempt {
	t.Helper()
	ctx := context.Background()
	a, err := e.st.CreateAttempt(ctx, store.NewAttempt{JobID: jobID, Provider: "p", Role: store.RolePrimary,
		LeaseOwner: "test", Price: &store.Price{InputPerMTok: 0.15, OutputPerMTok: 0.6}})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.st.FinishAttempt(ctx, a.ID, store.AttemptOutcome{State: store.AttemptUnknown,
		Error: map[string]any{"kind": "timeout", "outcome_unknown": true}}); err != nil {
		t.Fatal(err)
	}
	if st, err := e.st.SettleJob(ctx, jobID, ""); err != nil || st != store.JobUnknown {
		t.Fatalf("settle: %s %v", st, err)
	}
	return a
}
