package api_test

import (
	"net/http"
	"strings"
	"testing"
)

// A resolution of a job that does not exist (or is another owner's) is 404
// job-not-found first, before anything about the resolution is judged — a
// body with a member a resolution does not take included (docs/api.md).
// Found by review.
func TestResolveUnknownJobIs404First(t *testing.T) {
	b := setup(t, options{})
	r := b.do(t, "POST", "/v1/jobs/0193b0f2-6c1e-7a7b-9d2e-3c4b5a6d7e8f/attempts/1/resolve", acmeKey, `{"outcome":"failed","reason":"not in console"}`)
	if r.status != http.StatusNotFound {
		t.Fatalf("resolution of a job that does not exist: %d %s", r.status, r.raw)
	}
	// Another owner's job, the same.
	id := b.create(t, globexKey, "resolve-404-first", triageBody("x"), "Prefer", "wait=10").job()
	if id == "" {
		t.Fatal("set-up: globex's job was not created")
	}
	if r := b.do(t, "POST", "/v1/jobs/"+id+"/attempts/1/resolve", acmeKey, `{"outcome":`); r.status != http.StatusNotFound || problemType(r) != "job-not-found" {
		t.Fatalf("malformed resolution of another owner's job: %d %s; want 404 job-not-found", r.status, r.raw)
	}
}

// Once the job is found, a malformed resolution is still the 400 that says
// what was wrong, in the request's terms.
func TestResolveMalformedBodyOfAJobIs400(t *testing.T) {
	b := setup(t, options{})
	id := b.create(t, acmeKey, "resolve-400", triageBody("x"), "Prefer", "wait=10").job()
	if id == "" {
		t.Fatal("set-up: the job was not created")
	}
	r := b.do(t, "POST", "/v1/jobs/"+id+"/attempts/1/resolve", acmeKey, `{"outcome":1}`)
	if d, _ := r.body["detail"].(string); r.status != http.StatusBadRequest || !strings.Contains(d, `"outcome"`) || strings.Contains(d, "Go struct") {
		t.Errorf("malformed resolution of an existing job: %d %s; want 400 naming \"outcome\"", r.status, r.raw)
	}
}
