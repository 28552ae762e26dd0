package api_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/routerhq/router/internal/api"
	"github.com/routerhq/router/internal/providers"
)

// A retry of a failed job whose prompt version this replica does not load (a
// rolling update: the job is another deployment's) is refused before
// anything is written, as a "succeeded" resolution of it is: 503
// prompt-unavailable with Retry-After, naming the version, the job still
// failed, with no new attempt, and the retry's Idempotency-Key not taken, so
// the same retry sent again (to a replica that has the version) runs. Once
// the version is retired (the job is older than the replica, which has been
// up for longer than a rolling update takes), a final 422 prompt-retired. It
// used to start a round this replica could only hand over.
func TestRetryOnReplicaWithoutThePromptVersion(t *testing.T) {
	b := setup(t, options{respond: func(int, *providers.Request) providers.Step {
		return providers.Step{Status: http.StatusBadRequest}
	}})
	failed := b.create(t, acmeKey, "retry-rolling-1", triageBody("Down"), "Prefer", "wait=30")
	if failed.body["state"] != "failed" {
		t.Fatalf("first job: %d %s", failed.status, failed.raw)
	}
	id := failed.job()
	var version string
	if err := b.db.Pool.QueryRow(context.Background(), `SELECT prompt_version FROM jobs WHERE id = $1`, id).Scan(&version); err != nil {
		t.Fatal(err)
	}
	setVersion := func(v string) {
		t.Helper()
		if _, err := b.db.Pool.Exec(context.Background(), `UPDATE jobs SET prompt_version = $2 WHERE id = $1`, id, v); err != nil {
			t.Fatal(err)
		}
	}
	unchanged := func(what string) {
		t.Helper()
		if n := b.count(t, `SELECT count(*) FROM jobs WHERE id = $1 AND state = 'failed' AND retry_key IS NULL`, id); n != 1 {
			t.Fatalf("%s: the job is no longer failed, or holds the retry's key", what)
		}
		if n := b.count(t, `SELECT count(*) FROM attempts WHERE job_id = $1`, id); n != 1 {
			t.Fatalf("%s: %d attempts, want 1 (nothing written)", what, n)
		}
	}
	setVersion("v-next")
	retry := func() reply {
		return b.do(t, "POST", "/v1/jobs/"+id+"/retry", acmeKey, "", "Idempotency-Key", "retry-once")
	}
	for i := range 2 { // the second: a resend with the key, not taken by the first
		r := retry()
		typ, _ := r.body["type"].(string)
		if r.status != http.StatusServiceUnavailable || !strings.HasSuffix(typ, "prompt-unavailable") ||
			r.header.Get("Retry-After") == "" || !strings.Contains(string(r.raw), "v-next") || r.body["job_id"] != id {
			t.Fatalf("retry %d on a replica without the version: %d Retry-After %q %s; want 503 prompt-unavailable naming v-next",
				i+1, r.status, r.header.Get("Retry-After"), r.raw)
		}
		unchanged("a retry refused 503")
	}
	// A job from before this replica started, up for an hour: the version
	// was retired, a final 422.
	if _, err := b.db.Pool.Exec(context.Background(), `UPDATE jobs SET created_at = now() - interval '2 hours' WHERE id = $1`, id); err != nil {
		t.Fatal(err)
	}
	api.SetStarted(b.api, time.Now().Add(-time.Hour))
	r := retry()
	if typ, _ := r.body["type"].(string); r.status != http.StatusUnprocessableEntity || !strings.HasSuffix(typ, "prompt-retired") ||
		r.header.Get("Retry-After") != "" {
		t.Fatalf("retry of a job whose version was retired: %d Retry-After %q %s; want 422 prompt-retired", r.status, r.header.Get("Retry-After"), r.raw)
	}
	unchanged("a retry refused 422")
	// On a replica that has the version the same retry runs.
	setVersion(version)
	if r := retry(); r.status != http.StatusOK || r.header.Get("Idempotent-Replayed") != "" {
		t.Fatalf("the retry on a replica with the version: %d %s; want 200, a new round", r.status, r.raw)
	}
}
