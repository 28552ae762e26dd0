package api_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/routerhq/router/internal/api"
	"github.com/routerhq/router/internal/providers"
)

// SPEC §17: past its requests per second an owner gets 429 with Retry-After,
// in the endpoint's error shape, and nothing is stored; other owners are not
// affected.
func TestRequestsPerSecondPerOwner(t *testing.T) {
	b := setup(t, options{ownerLimits: map[string]api.Limits{"acme": {RequestsPerSecond: 0.001, Burst: 2}}})
	for i := range 2 {
		if r := b.do(t, "GET", "/v1/jobs/00000000-0000-0000-0000-000000000000", acmeKey, ""); r.status != http.StatusNotFound {
			t.Fatalf("request %d within the burst: %d %s", i, r.status, r.raw)
		}
	}
	r := b.create(t, acmeKey, "rate-1", triageBody("Login"))
	if r.status != http.StatusTooManyRequests || r.header.Get("Retry-After") == "" ||
		!strings.HasSuffix(r.body["type"].(string), "/rate-limited") || !strings.Contains(r.body["detail"].(string), "requests per second") {
		t.Fatalf("over the rate: %d %v %s", r.status, r.header, r.raw)
	}
	chat := b.do(t, "POST", "/v1/chat/completions", acmeKey, `{"model":"default","messages":[{"role":"user","content":"hi"}]}`)
	if chat.status != http.StatusTooManyRequests || chat.header.Get("Retry-After") == "" ||
		!strings.Contains(string(chat.raw), `"code":"rate_limit_exceeded"`) {
		t.Fatalf("chat over the rate: %d %s", chat.status, chat.raw)
	}
	if n := b.count(t, `SELECT count(*) FROM jobs`); n != 0 {
		t.Fatalf("%d jobs stored by refused requests", n)
	}
	if r := b.create(t, globexKey, "rate-1", triageBody("Login")); r.status != http.StatusAccepted && r.status != http.StatusCreated {
		t.Fatalf("another owner: %d %s", r.status, r.raw)
	}
}

// SPEC §17: max_live_jobs refuses a new job while the owner has that many
// pending, running or unknown jobs — counting this replica's own admissions
// between reads of the database, and the database's count on any replica —
// never refuses a replay of an existing key, and stores nothing when it refuses.
func TestMaxLiveJobs(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	b := setup(t, options{
		ownerLimits: map[string]api.Limits{"acme": {MaxLiveJobs: 1}},
		liveRefresh: time.Hour, // the database is read once: admissions since are counted here
		respond: func(int, *providers.Request) providers.Step {
			<-release
			return providers.Step{Output: validTriage}
		},
	})
	if r := b.create(t, acmeKey, "live-1", triageBody("One")); r.status != http.StatusAccepted {
		t.Fatalf("first job: %d %s", r.status, r.raw)
	}
	r := b.create(t, acmeKey, "live-2", triageBody("Two"))
	if r.status != http.StatusTooManyRequests || r.header.Get("Retry-After") == "" || r.body["limit"] != "max_live_jobs" ||
		!strings.Contains(r.body["detail"].(string), "max_live_jobs is 1") {
		t.Fatalf("second job: %d %v %s", r.status, r.header, r.raw)
	}
	if n := b.count(t, `SELECT count(*) FROM jobs WHERE idempotency_key = 'live-2'`); n != 0 {
		t.Fatal("the refused job was stored")
	}
	if r := b.create(t, acmeKey, "live-1", triageBody("One")); r.status != http.StatusAccepted || r.header.Get("Idempotent-Replayed") != "true" {
		t.Fatalf("replay of the live job: %d %s", r.status, r.raw)
	}
	chat := b.do(t, "POST", "/v1/chat/completions", acmeKey, `{"model":"default","messages":[{"role":"user","content":"hi"}]}`,
		"Idempotency-Key", "live-chat")
	if chat.status != http.StatusTooManyRequests || !strings.Contains(string(chat.raw), `"code":"max_live_jobs_exceeded"`) {
		t.Fatalf("chat: %d %s", chat.status, chat.raw)
	}
	if r := b.create(t, globexKey, "live-1", triageBody("One")); r.status != http.StatusAccepted {
		t.Fatalf("another owner: %d %s", r.status, r.raw)
	}

	// Another replica (its own limiter) reads the owner's live jobs from the
	// database.
	other := httptest.NewServer(api.New(api.Config{LeaseOwner: "other", Lease: 30 * time.Second,
		OwnerLimits: map[string]api.Limits{"acme": {MaxLiveJobs: 1}}}, api.Deps{
		Store: b.db.Store, Listener: b.listener, Prompts: b.prompts, Routes: map[string]bool{"default": true},
		Exec: b.runner, Auth: &api.KeyAuth{Static: map[string]string{acmeKey: "acme"}},
	}))
	defer other.Close()
	req, _ := http.NewRequest("POST", other.URL+"/v1/jobs", strings.NewReader(triageBody("Three")))
	req.Header.Set("Authorization", "Bearer "+acmeKey)
	req.Header.Set("Idempotency-Key", "live-3")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusTooManyRequests {
		t.Fatalf("other replica: %d, want 429 from the database's count", resp.StatusCode)
	}
}

// A retried job is live again, so POST /v1/jobs/{id}/retry counts against
// max_live_jobs like a new job (SPEC §17): at the limit it is a 429 with
// Retry-After and the job stays failed, with no new attempt.
func TestRetryCountsAgainstMaxLiveJobs(t *testing.T) {
	release := make(chan struct{})
	var once sync.Once
	free := func() { once.Do(func() { close(release) }) }
	defer free()
	b := setup(t, options{
		ownerLimits: map[string]api.Limits{"acme": {MaxLiveJobs: 1}},
		liveRefresh: time.Nanosecond, // every admission reads the database's count
		respond: func(_ int, req *providers.Request) providers.Step {
			for _, m := range req.Messages {
				if strings.Contains(m.Content, "Refused") {
					return providers.Step{Status: http.StatusBadRequest}
				}
			}
			<-release
			return providers.Step{Output: validTriage}
		},
	})
	failed := b.create(t, acmeKey, "retry-live-1", triageBody("Refused"), "Prefer", "wait=30")
	if failed.body["state"] != "failed" {
		t.Fatalf("first job: %d %s", failed.status, failed.raw)
	}
	if r := b.create(t, acmeKey, "retry-live-2", triageBody("Held")); r.status != http.StatusAccepted {
		t.Fatalf("second job: %d %s", r.status, r.raw)
	}
	id := failed.job()
	r := b.do(t, "POST", "/v1/jobs/"+id+"/retry", acmeKey, "")
	if r.status != http.StatusTooManyRequests || r.header.Get("Retry-After") == "" || r.body["limit"] != "max_live_jobs" ||
		!strings.Contains(r.body["detail"].(string), "not retried") {
		t.Fatalf("retry at the limit: %d %v %s", r.status, r.header, r.raw)
	}
	if n := b.count(t, `SELECT count(*) FROM jobs WHERE id = $1 AND state = 'failed'`, id); n != 1 {
		t.Fatal("a refused retry changed the job")
	}
	// At the limit, a job that is not the caller's is still not found.
	if r := b.do(t, "POST", "/v1/jobs/"+id+"/retry", globexKey, ""); r.status != http.StatusNotFound {
		t.Fatalf("another owner's job at the limit: %d %s", r.status, r.raw)
	}
	if r := b.do(t, "POST", "/v1/jobs/01a234c5-5000-73c2-ae14-9fbc685c587d/retry", acmeKey, ""); r.status != http.StatusNotFound {
		t.Fatalf("a job that does not exist, at the limit: %d %s", r.status, r.raw)
	}
	if n := b.count(t, `SELECT count(*) FROM attempts WHERE job_id = $1`, id); n != 1 {
		t.Fatalf("a refused retry made attempts: %d", n)
	}
	free()
	if r := b.create(t, acmeKey, "retry-live-2", triageBody("Held"), "Prefer", "wait=30"); r.body["state"] != "succeeded" {
		t.Fatalf("second job after release: %d %s", r.status, r.raw)
	}
	if r := b.do(t, "POST", "/v1/jobs/"+id+"/retry", acmeKey, ""); r.status == http.StatusTooManyRequests || r.status >= 300 {
		t.Fatalf("retry under the limit: %d %s", r.status, r.raw)
	}
}
