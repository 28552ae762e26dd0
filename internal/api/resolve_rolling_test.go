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

// A job created under a prompt version this replica does not have (a rolling
// update: another replica's version) cannot have its "succeeded" resolution
// validated here. The answer is a retryable 503 naming the version, and
// nothing changes — unless the job is old enough that its version has been
// retired (a final 422). A "failed" resolution needs no validation and works.
func TestResolveOnReplicaWithoutThePromptVersion(t *testing.T) {
	b := setup(t, options{
		timeout:  50 * time.Millisecond,
		respond:  func(int, *providers.Request) providers.Step { return providers.Step{Hang: true} },
		fallback: func(int, *providers.Request) providers.Step { return providers.Step{Output: validTriage} },
	})
	id := b.create(t, acmeKey, "rolling-1", triageBody("hang"), "Prefer", "wait=30").job()
	if _, err := b.db.Pool.Exec(context.Background(), `UPDATE jobs SET prompt_version = 'v-next' WHERE id = $1`, id); err != nil {
		t.Fatal(err)
	}
	got := b.do(t, "POST", "/v1/jobs/"+id+"/attempts/1/resolve", acmeKey, `{"outcome":"succeeded","result":`+validTriage+`}`)
	if got.status != http.StatusServiceUnavailable || got.body["type"] == nil ||
		!strings.HasSuffix(got.body["type"].(string), "prompt-unavailable") || got.header.Get("Retry-After") == "" {
		t.Fatalf("resolve on a replica without the version: %d Retry-After %q %s", got.status, got.header.Get("Retry-After"), got.raw)
	}
	if !strings.Contains(string(got.raw), `v-next`) {
		t.Fatalf("the problem does not name the job's prompt version: %s", got.raw)
	}
	if n := b.count(t, `SELECT count(*) FROM attempts WHERE job_id = $1 AND state = 'unknown'`, id); n != 1 {
		t.Fatalf("unknown attempts after the refused resolution = %d, want 1 (nothing changed)", n)
	}
	if n := b.count(t, `SELECT count(*) FROM jobs WHERE id = $1 AND state = 'unknown'`, id); n != 1 {
		t.Fatal("the job is no longer unknown after a refused resolution")
	}
	// On a replica up for an hour the job, created since it started, comes
	// from a newer deployment: still a 503.
	api.SetStarted(b.api, time.Now().Add(-time.Hour))
	if got := b.do(t, "POST", "/v1/jobs/"+id+"/attempts/1/resolve", acmeKey, `{"outcome":"succeeded","result":`+validTriage+`}`); got.status != http.StatusServiceUnavailable {
		t.Fatalf("a job newer than the replica: %d %s, want 503", got.status, got.raw)
	}
	// A job from before this replica started, which has been up for longer
	// than a rolling update takes: its version has been retired, no replica
	// can validate the result, and a retry would go on for ever — a final
	// 422 naming what is left, nothing changed.
	if _, err := b.db.Pool.Exec(context.Background(), `UPDATE jobs SET created_at = now() - interval '2 hours' WHERE id = $1`, id); err != nil {
		t.Fatal(err)
	}
	// While a rolling update may still be under way (this replica started a
	// minute ago), an older job may come from a replica of the previous
	// deployment that is still up: still a 503.
	api.SetStarted(b.api, time.Now().Add(-time.Minute))
	if got := b.do(t, "POST", "/v1/jobs/"+id+"/attempts/1/resolve", acmeKey, `{"outcome":"succeeded","result":`+validTriage+`}`); got.status != http.StatusServiceUnavailable {
		t.Fatalf("an older job on a replica started a minute ago: %d %s, want 503", got.status, got.raw)
	}
	api.SetStarted(b.api, time.Now().Add(-time.Hour))
	retired := b.do(t, "POST", "/v1/jobs/"+id+"/attempts/1/resolve", acmeKey, `{"outcome":"succeeded","result":`+validTriage+`}`)
	if retired.status != http.StatusUnprocessableEntity || !strings.HasSuffix(retired.body["type"].(string), "prompt-retired") ||
		retired.header.Get("Retry-After") != "" || !strings.Contains(string(retired.raw), `\"failed\"`) {
		t.Fatalf("resolve of a job whose version was retired: %d Retry-After %q %s", retired.status, retired.header.Get("Retry-After"), retired.raw)
	}
	if n := b.count(t, `SELECT count(*) FROM attempts WHERE job_id = $1 AND state = 'unknown'`, id); n != 1 {
		t.Fatal("the refused resolution changed the attempt")
	}
	failed := b.do(t, "POST", "/v1/jobs/"+id+"/attempts/1/resolve", acmeKey, `{"outcome":"failed"}`)
	if failed.status != http.StatusOK {
		t.Fatalf(`a "failed" resolution on the same replica: %d %s`, failed.status, failed.raw)
	}
}
