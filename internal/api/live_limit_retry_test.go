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

// max_live_jobs holds across replicas for a retry too: replica A, whose own
// count (read within its refresh interval) does not show replica B's live
// job, would revive a failed job past the limit; the database's count
// refuses it: 429 with Retry-After, the job still failed.
func TestRetryHeldToMaxLiveJobsAcrossReplicas(t *testing.T) {
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	b := setup(t, options{
		ownerLimits: map[string]api.Limits{"acme": {MaxLiveJobs: 1}}, // liveRefresh 0: the default 1 s
		respond: func(_ int, req *providers.Request) providers.Step {
			for _, m := range req.Messages {
				if strings.Contains(m.Content, "Broken") {
					return providers.Step{Status: 400}
				}
			}
			<-release
			return providers.Step{Output: validTriage}
		},
	})
	other := httptest.NewServer(api.New(api.Config{LeaseOwner: "other", Lease: 30 * time.Second,
		OwnerLimits: map[string]api.Limits{"acme": {MaxLiveJobs: 1}}}, api.Deps{
		Store: b.db.Store, Listener: b.listener, Prompts: b.prompts, Routes: map[string]bool{"default": true},
		Exec: b.runner, Auth: &api.KeyAuth{Static: map[string]string{acmeKey: "acme"}},
	}))
	t.Cleanup(other.Close)
	// Replica A reads the owner's count (0) with a job that fails within its wait.
	failed := b.create(t, acmeKey, "broken-1", triageBody("Broken"), "Prefer", "wait=10")
	id, _ := failed.body["id"].(string)
	if failed.body["state"] != "failed" || id == "" {
		t.Fatalf("set-up: the broken job: %d %s; want it failed", failed.status, failed.raw)
	}
	// Replica B creates a live job: acme is at its limit.
	r2, err := send(other.URL+"/v1/jobs", "POST", acmeKey, triageBody("Two"), "Idempotency-Key", "live-2")
	if err != nil || r2.status != http.StatusAccepted {
		t.Fatalf("replica B: %v %d %s", err, r2.status, r2.raw)
	}
	r := b.do(t, http.MethodPost, "/v1/jobs/"+id+"/retry", acmeKey, "")
	if r.status != http.StatusTooManyRequests || r.header.Get("Retry-After") == "" || !strings.Contains(string(r.raw), "limits.max_live_jobs is 1") {
		t.Fatalf("retry through replica A with acme at its limit (replica B's job): %d %s; want 429 too-many-live-jobs with Retry-After", r.status, r.raw)
	}
	if n := b.count(t, `SELECT count(*) FROM jobs WHERE id = '`+id+`' AND state = 'failed'`); n != 1 {
		t.Errorf("the refused retry changed the job (failed rows: %d)", n)
	}
}
