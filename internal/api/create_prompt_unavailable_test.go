package api_test

import (
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/routerhq/router/internal/api"
)

// POST /v1/jobs naming a prompt_version this replica does not load, while
// another replica may (a rolling update: the previous deployment's version,
// or the next one's), is answered as a retry or resolution of such a job is:
// 503 prompt-unavailable with Retry-After, nothing stored and the request's
// Idempotency-Key not taken, so the same request sent again reaches a replica
// that has the version and is created there. A request whose key already
// holds its job gets that job. Once the replica has been up for longer than
// a rolling update takes (15 minutes), the version is retired or not
// deployed: a final 422 unknown-prompt, as for a prompt name not loaded at
// all (at any uptime). It used to be a final 422 at once, telling a client
// that pins a version during a rollout that its request can never succeed.
func TestCreatePinnedVersionDuringRollingUpdate(t *testing.T) {
	b := setup(t, options{}) // a replica of the previous deployment: triage version "3"
	// A replica of the new deployment, started just now: triage version "4".
	v4api, v4 := deployedAPI(t, b, func(dir string) {
		edit(t, filepath.Join(dir, "prompt.yaml"), `version: "3"`, `version: "4"`)
	})
	post := func(key, body string) reply {
		t.Helper()
		got, err := send(v4.URL+"/v1/jobs", "POST", acmeKey, body, "Idempotency-Key", key)
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	pinned := func(version string) string {
		return `{"prompt":"triage","prompt_version":"` + version + `","input":{"subject":"s","body":"b"}}`
	}
	for _, version := range []string{"3", "5"} { // the previous deployment's, a next one's
		for i := range 2 { // the second: a resend under the same key, not taken by the first
			r := post("pin-"+version, pinned(version))
			typ, _ := r.body["type"].(string)
			if r.status != http.StatusServiceUnavailable || !strings.HasSuffix(typ, "prompt-unavailable") ||
				r.header.Get("Retry-After") == "" || !strings.Contains(string(r.raw), `not \"`+version+`\"`) {
				t.Fatalf("POST /v1/jobs pinning version %s (send %d) to a replica loading version 4, started just now: %d Retry-After %q %s; "+
					"want 503 prompt-unavailable with Retry-After naming the version, as a retry of such a job gets",
					version, i+1, r.status, r.header.Get("Retry-After"), r.raw)
			}
		}
	}
	if n := b.count(t, `SELECT count(*) FROM jobs`); n != 0 {
		t.Fatalf("%d jobs stored for requests answered 503", n)
	}
	// The same request, on a replica that has version 3, is created there
	// (its key was not taken); sent again to the new replica, it gets that job.
	created := b.create(t, acmeKey, "pin-3", pinned("3"), "Prefer", "wait=30")
	if created.status != http.StatusCreated || created.job() == "" {
		t.Fatalf("the pinned request on a replica with version 3: %d %s; want 201", created.status, created.raw)
	}
	if r := post("pin-3", pinned("3")); r.status != http.StatusOK || r.job() != created.job() || r.header.Get("Retry-After") != "" {
		t.Fatalf("the pinned request again on the new replica, its key holding its job: %d %s; want 200 replaying job %s", r.status, r.raw, created.job())
	}
	// A prompt not loaded at all is unknown, at any uptime.
	if r := post("nope", `{"prompt":"triage-v9","input":{"subject":"s","body":"b"}}`); r.status != http.StatusUnprocessableEntity ||
		!strings.Contains(string(r.raw), "unknown-prompt") || r.header.Get("Retry-After") != "" {
		t.Fatalf("an unknown prompt name: %d %s; want 422 unknown-prompt", r.status, r.raw)
	}
	// Up for an hour: no rolling update is under way, the version is
	// retired (or not deployed): a final 422.
	api.SetStarted(v4api, time.Now().Add(-time.Hour))
	for _, version := range []string{"3", "5"} {
		r := post("late-"+version, pinned(version))
		if typ, _ := r.body["type"].(string); r.status != http.StatusUnprocessableEntity || !strings.HasSuffix(typ, "unknown-prompt") ||
			r.header.Get("Retry-After") != "" || !strings.Contains(string(r.raw), `not \"`+version+`\"`) {
			t.Fatalf("POST /v1/jobs pinning version %s to a replica up for an hour: %d Retry-After %q %s; want 422 unknown-prompt",
				version, r.status, r.header.Get("Retry-After"), r.raw)
		}
	}
	if n := b.count(t, `SELECT count(*) FROM jobs`); n != 1 {
		t.Fatalf("%d jobs stored, want 1 (the one created on the replica with version 3)", n)
	}
}
