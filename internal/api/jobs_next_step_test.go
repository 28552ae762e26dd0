package api_test

import (
	"context"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/store"
)

// storedError is the job's error as the database holds it.
func (b *bundle) storedError(t *testing.T, id string) string {
	t.Helper()
	var e *string
	if err := b.db.Pool.QueryRow(context.Background(), "SELECT error FROM jobs WHERE id = $1", id).Scan(&e); err != nil {
		t.Fatal(err)
	}
	if e == nil {
		t.Fatalf("job %s has no stored error", id)
	}
	return *e
}

// A failed job read through /v1/jobs (its creation's answer, the replay a
// resend with the same Idempotency-Key gets, GET /v1/jobs/{id} and a page of
// GET /v1/jobs) says in next_step that it has ended and how to run it again,
// as the chat path's 502 does (TestChatFailedJobSaysHowToRecover); its error
// is the stored one, untouched. The advice is true: after POST
// /v1/jobs/{id}/retry a resend with the same key attaches to the new round,
// and the job, succeeded now, has no next_step.
func TestFailedJobSaysHowToRunItAgain(t *testing.T) {
	var fail atomic.Bool
	fail.Store(true)
	b := setup(t, options{respond: func(int, *providers.Request) providers.Step {
		if fail.Load() {
			return providers.Step{Status: 500}
		}
		return providers.Step{Output: validTriage}
	}})
	body := triageBody("next step")

	created := b.create(t, acmeKey, "next-step-1", body, "Prefer", "wait=30")
	id := created.job()
	if created.status != http.StatusCreated || created.body["state"] != store.JobFailed || id == "" {
		t.Fatalf("create: %d %s, want 201 with a failed job", created.status, created.raw)
	}
	stored := b.storedError(t, id)
	step, _ := created.body["next_step"].(string)
	for _, want := range []string{
		"will not try it again by itself",
		"POST /v1/jobs/" + id + "/retry",
		"resend with the same Idempotency-Key to attach to it",
		"GET /v1/jobs/" + id,
		"a new Idempotency-Key",
	} {
		if !strings.Contains(step, want) {
			t.Errorf("next_step %q does not say %q", step, want)
		}
	}

	replay := b.create(t, acmeKey, "next-step-1", body)
	if replay.status != http.StatusOK || replay.header.Get("Idempotent-Replayed") != "true" || replay.job() != id {
		t.Fatalf("resend with the same key: %d %s, want the 200 replay of job %s", replay.status, replay.raw, id)
	}
	got := b.do(t, http.MethodGet, "/v1/jobs/"+id, acmeKey, "")
	if got.status != http.StatusOK {
		t.Fatalf("GET: %d %s", got.status, got.raw)
	}
	page := b.do(t, http.MethodGet, "/v1/jobs?state=failed", acmeKey, "")
	data, _ := page.body["data"].([]any)
	if page.status != http.StatusOK || len(data) != 1 {
		t.Fatalf("list of failed jobs: %d %s, want one job", page.status, page.raw)
	}
	listed, _ := data[0].(map[string]any)
	for name, job := range map[string]map[string]any{"create": created.body, "replay": replay.body, "GET": got.body, "list": listed} {
		if s, _ := job["next_step"].(string); s != step {
			t.Errorf("%s: next_step %q, want %q", name, s, step)
		}
		if e, _ := job["error"].(string); e != stored {
			t.Errorf("%s: error %q, want the stored error %q", name, e, stored)
		}
	}
	if strings.Contains(stored, "/retry") {
		t.Errorf("the stored error %q carries the advice: it belongs to the API's answer only", stored)
	}

	fail.Store(false)
	retried := b.do(t, http.MethodPost, "/v1/jobs/"+id+"/retry", acmeKey, "", "Prefer", "wait=30")
	if retried.status != http.StatusOK || retried.body["state"] != store.JobSucceeded {
		t.Fatalf("retry as advised: %d %s, want 200 succeeded", retried.status, retried.raw)
	}
	again := b.create(t, acmeKey, "next-step-1", body)
	if again.status != http.StatusOK || again.job() != id || again.body["state"] != store.JobSucceeded {
		t.Fatalf("resend with the same key after the retry: %d %s, want 200 with job %s succeeded", again.status, again.raw, id)
	}
	for name, r := range map[string]reply{"retry": retried, "replay": again, "GET": b.do(t, http.MethodGet, "/v1/jobs/"+id, acmeKey, "")} {
		if _, ok := r.body["next_step"]; ok {
			t.Errorf("%s of the succeeded job: %s, want no next_step", name, r.raw)
		}
	}
}

// A job that is running or cancelled is answered as before: no next_step.
func TestNotFailedJobHasNoNextStep(t *testing.T) {
	b := setup(t, options{respond: func(int, *providers.Request) providers.Step { return providers.Step{Hang: true} }})
	r := b.create(t, acmeKey, "next-step-live", triageBody("live"))
	id := r.job()
	if r.status != http.StatusAccepted || id == "" {
		t.Fatalf("create: %d %s, want 202", r.status, r.raw)
	}
	check := func(what string, r reply) {
		t.Helper()
		if _, ok := r.body["next_step"]; ok || strings.Contains(string(r.raw), "next_step") {
			t.Errorf("%s: %s, want no next_step", what, r.raw)
		}
	}
	check("create", r)
	check("GET of the live job", b.do(t, http.MethodGet, "/v1/jobs/"+id, acmeKey, ""))
	cancelled := b.do(t, http.MethodPost, "/v1/jobs/"+id+"/cancel", acmeKey, "")
	if cancelled.status != http.StatusOK || cancelled.body["state"] != store.JobCancelled {
		t.Fatalf("cancel: %d %s", cancelled.status, cancelled.raw)
	}
	check("cancel", cancelled)
	check("replay of the cancelled job", b.create(t, acmeKey, "next-step-live", triageBody("live")))
	check("list", b.do(t, http.MethodGet, "/v1/jobs", acmeKey, ""))
}

// A job whose provider refused the request itself (a bad request: the
// caller's fault) would be refused again by a retry, which sends it
// unchanged: next_step says to correct it and send it under a new key, as
// the chat path's 400 does.
func TestFailedJobRefusedAsInvalidSaysCorrectIt(t *testing.T) {
	b := setup(t, options{respond: func(int, *providers.Request) providers.Step {
		return providers.Step{Error: &providers.Error{Kind: providers.KindBadRequest, StatusCode: 400, Message: "temperature is not supported"}}
	}})
	r := b.create(t, acmeKey, "next-step-invalid", triageBody("invalid"), "Prefer", "wait=30")
	id := r.job()
	if r.status != http.StatusCreated || r.body["state"] != store.JobFailed {
		t.Fatalf("create: %d %s, want 201 failed", r.status, r.raw)
	}
	for name, r := range map[string]reply{"create": r, "GET": b.do(t, http.MethodGet, "/v1/jobs/"+id, acmeKey, "")} {
		step, _ := r.body["next_step"].(string)
		for _, want := range []string{"will not try it again by itself", "correct the request", "a new Idempotency-Key", "bound to the failed job " + id} {
			if !strings.Contains(step, want) {
				t.Errorf("%s: next_step %q does not say %q", name, step, want)
			}
		}
		if strings.Contains(step, "same Idempotency-Key") {
			t.Errorf("%s: next_step %q advises a retry that would be refused the same way", name, step)
		}
	}
}

// A chat call that sent no Idempotency-Key has no key to resend with: its
// failed job, read with GET /v1/jobs/{id}, is told to retry and read it, or
// to send the request again, and nothing about keys.
func TestFailedKeylessChatJobNextStepNamesNoKey(t *testing.T) {
	b := setup(t, options{respond: func(int, *providers.Request) providers.Step { return providers.Step{Status: 500} }})
	chat := b.do(t, http.MethodPost, chatPath, acmeKey, `{"model":"default","messages":[{"role":"user","content":"hi"}]}`)
	id := chat.header.Get("X-Router-Job-Id")
	if chat.status != http.StatusBadGateway || id == "" {
		t.Fatalf("chat: %d %s, want 502 with X-Router-Job-Id", chat.status, chat.raw)
	}
	r := b.do(t, http.MethodGet, "/v1/jobs/"+id, acmeKey, "")
	step, _ := r.body["next_step"].(string)
	if r.status != http.StatusOK || r.body["state"] != store.JobFailed || !strings.Contains(step, "POST /v1/jobs/"+id+"/retry") ||
		!strings.Contains(step, "GET /v1/jobs/"+id) || !strings.Contains(step, "send the request again") || strings.Contains(step, "Idempotency-Key") {
		t.Errorf("GET of the failed keyless chat job: %d next_step %q, want the retry, GET and a new request, and no Idempotency-Key", r.status, step)
	}
}
