package api_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/routerhq/router/internal/api"
	"github.com/routerhq/router/internal/providers"
)

// twoReplicas is replica A (the bundle) and replica B (other), both limiting
// acme to one live job, on one database. A job whose input says "Quick" ends
// at once; any other runs until the test ends.
func twoReplicas(t *testing.T) (b *bundle, other *httptest.Server) {
	t.Helper()
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	b = setup(t, options{
		ownerLimits: map[string]api.Limits{"acme": {MaxLiveJobs: 1}}, // liveRefresh 0: the default 1 s
		respond: func(_ int, req *providers.Request) providers.Step {
			for _, m := range req.Messages {
				if strings.Contains(m.Content, "Quick") {
					return providers.Step{Output: validTriage}
				}
			}
			<-release
			return providers.Step{Output: validTriage}
		},
	})
	other = httptest.NewServer(api.New(api.Config{LeaseOwner: "other", Lease: 30 * time.Second,
		OwnerLimits: map[string]api.Limits{"acme": {MaxLiveJobs: 1}}}, api.Deps{
		Store: b.db.Store, Listener: b.listener, Prompts: b.prompts, Routes: map[string]bool{"default": true},
		Exec: b.runner, Auth: &api.KeyAuth{Static: map[string]string{acmeKey: "acme"}},
	}))
	t.Cleanup(other.Close)
	// Replica A reads the owner's count (0) with a job that ends within its wait.
	if r := b.create(t, acmeKey, "q-1", triageBody("Quick"), "Prefer", "wait=10"); r.status != http.StatusCreated {
		t.Fatalf("quick job: %d %s", r.status, r.raw)
	}
	// Replica B creates a live job: acme is at its limit.
	r2, err := send(other.URL+"/v1/jobs", "POST", acmeKey, triageBody("Two"), "Idempotency-Key", "live-2")
	if err != nil || r2.status != http.StatusAccepted {
		t.Fatalf("replica B: %v %d %s", err, r2.status, r2.raw)
	}
	return b, other
}

func (b *bundle) liveJobs(t *testing.T) int {
	t.Helper()
	return b.count(t, `SELECT count(*) FROM jobs WHERE owner = 'acme' AND state IN ('pending','running','unknown')`)
}

// D1: max_live_jobs holds across replicas. Replica A, whose count (read
// within its refresh interval) does not show replica B's job, lets a new job
// through; the database's count refuses it: 429 with Retry-After, nothing
// stored. A replay of B's job through A is still answered with the job.
func TestMaxLiveJobsHeldAcrossReplicas(t *testing.T) {
	b, _ := twoReplicas(t)
	r3 := b.create(t, acmeKey, "live-3", triageBody("Three"))
	if live := b.liveJobs(t); live > 1 {
		t.Fatalf("max_live_jobs 1, but the database holds %d live jobs of acme (replica A answered %d to the third job)", live, r3.status)
	}
	if r3.status != http.StatusTooManyRequests || r3.header.Get("Retry-After") == "" ||
		!strings.HasPrefix(r3.header.Get("Content-Type"), "application/problem+json") || r3.body["type"] == nil ||
		!strings.HasSuffix(r3.body["type"].(string), "too-many-live-jobs") || r3.body["limit"] != "max_live_jobs" {
		t.Fatalf("third job through replica A: %d %v %s; want 429 too-many-live-jobs with Retry-After", r3.status, r3.header, r3.raw)
	}
	if !strings.Contains(string(r3.raw), "limits.max_live_jobs is 1") {
		t.Errorf("refusal detail %s: want the limit and what to do", r3.raw)
	}
	if n := b.count(t, `SELECT count(*) FROM idempotency_keys WHERE idempotency_key = 'live-3'`); n != 0 {
		t.Errorf("the refused request stored its key (%d rows): want nothing stored", n)
	}
	// A replay of the live job through replica A is answered with it.
	rp := b.create(t, acmeKey, "live-2", triageBody("Two"))
	if rp.status != http.StatusAccepted && rp.status != http.StatusOK || rp.header.Get("Idempotent-Replayed") != "true" {
		t.Errorf("replay of replica B's job through replica A: %d %s; want the job, replayed", rp.status, rp.raw)
	}
}

// The chat endpoint's refusal by the database's count has OpenAI's shape,
// and tells an SDK that sent no key nothing against resending (nothing was
// stored), as the limiter's own refusal does.
func TestMaxLiveJobsHeldAcrossReplicasChat(t *testing.T) {
	b, _ := twoReplicas(t)
	r := b.do(t, "POST", "/v1/chat/completions", acmeKey, `{"model":"default","messages":[{"role":"user","content":"Three"}]}`)
	if live := b.liveJobs(t); live > 1 {
		t.Fatalf("max_live_jobs 1, but the database holds %d live jobs of acme (replica A answered %d to the chat call)", live, r.status)
	}
	if r.status != http.StatusTooManyRequests || r.header.Get("Retry-After") == "" ||
		!strings.Contains(string(r.raw), `"code":"max_live_jobs_exceeded"`) {
		t.Fatalf("chat call through replica A: %d %s; want the max_live_jobs 429", r.status, r.raw)
	}
	if r.header.Get("X-Should-Retry") != "" {
		t.Errorf("X-Should-Retry %q on a refusal that stored nothing", r.header.Get("X-Should-Retry"))
	}
}
