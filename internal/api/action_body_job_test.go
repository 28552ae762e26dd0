package api_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/routerhq/router/internal/providers"
)

// A cancel or retry sent with a body it does not take, for an id that names
// no job of the caller (another owner's job, no job, or not a job id at all),
// is the plain 404 job-not-found, whatever the body (docs/api.md: job_id and
// X-Router-Job-Id only "where a job exists"; another owner's job is "always
// the plain 404"), as a resolution is: the refusal of the body must not name
// the job, nor echo an unclipped path segment in a header. The caller's own
// job is still named by the 400 (or 413) refusing the body, and is unchanged.
func TestActionBodyRefusalNamesOnlyCallersJob(t *testing.T) {
	b := setup(t, options{maxBody: 4096, respond: func(call int, req *providers.Request) providers.Step {
		if strings.Contains(fmt.Sprint(req.Messages), "hangme") {
			return providers.Step{Hang: true} // the job stays running
		}
		return providers.Step{Output: `{"category":"nope"}`} // invalid: the job fails
	}})
	theirs := b.create(t, globexKey, "foreign-1", triageBody("Theirs"), "Prefer", "wait=10").job()
	long := strings.Repeat("a", 4000)
	bodies := map[string]string{
		"a body it does not take": `{"dry_run":true}`,
		"a body over the limit":   `{"dry_run":"` + strings.Repeat("x", 5000) + `"}`,
	}
	for _, id := range []string{theirs, "01937f2e-0000-7000-8000-000000000000", long} {
		for _, action := range []string{"cancel", "retry"} {
			for what, body := range bodies {
				r := b.do(t, "POST", "/v1/jobs/"+id+"/"+action, acmeKey, body)
				if h := r.header.Get("X-Router-Job-Id"); r.status != http.StatusNotFound || problemType(r) != "job-not-found" ||
					h != "" || r.body["job_id"] != nil {
					t.Errorf("%s of %.40s… (not acme's job) with %s: %d %v, X-Router-Job-Id %d bytes, job_id %.40v; "+
						"want 404 job-not-found naming no job", action, id, what, r.status, problemType(r), len(h), r.body["job_id"])
				}
			}
		}
	}
	if g := b.do(t, "GET", "/v1/jobs/"+theirs, globexKey, ""); g.body["state"] != "failed" {
		t.Errorf("globex's job after acme's refused actions: %v, want still failed", g.body["state"])
	}

	failed := b.create(t, acmeKey, "own-failed", triageBody("x"), "Prefer", "wait=10")
	if failed.body["state"] != "failed" {
		t.Fatalf("setup: job is %v, want failed", failed.body["state"])
	}
	running := b.create(t, acmeKey, "own-running", triageBody("hangme")).job()
	for _, c := range []struct{ action, id string }{{"retry", failed.job()}, {"cancel", running}} {
		for what, body := range bodies {
			r := b.do(t, "POST", "/v1/jobs/"+c.id+"/"+c.action, acmeKey, body)
			if r.status != http.StatusBadRequest && r.status != http.StatusRequestEntityTooLarge ||
				r.body["job_id"] != c.id || r.header.Get("X-Router-Job-Id") != c.id {
				t.Errorf("%s of acme's own job with %s: %d, job_id %v, X-Router-Job-Id %q; want the body refused (400 or 413) naming the job",
					c.action, what, r.status, r.body["job_id"], r.header.Get("X-Router-Job-Id"))
			}
		}
	}
	if g := b.do(t, "GET", "/v1/jobs/"+failed.job(), acmeKey, ""); g.body["state"] != "failed" {
		t.Errorf("a refused retry changed the job: %v, want still failed", g.body["state"])
	}
	if g := b.do(t, "GET", "/v1/jobs/"+running, acmeKey, ""); g.body["state"] == "cancelled" {
		t.Errorf("a refused cancel cancelled the job")
	}
}
