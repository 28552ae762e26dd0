package main

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/routerhq/router/internal/race"
	"github.com/routerhq/router/internal/store"
	"github.com/routerhq/router/internal/testdb"
)

// `router jobs get` of a failed job printed it without the next_step GET
// /v1/jobs/{id} and its job.failed webhook give it: an operator asked why a
// caller's job failed did not see what the caller was told to do. It now
// prints it, the same words; a job in any other state prints as before,
// byte for byte (encoding/json's indented encoding of the job).
func TestJobsGetPrintsNextStepOfAFailedJob(t *testing.T) {
	db := testdb.New(t, store.Options{})
	cfg := writeConfig(t, db, "  - name: p\n    type: scripted")
	failed := jobIn(t, db, "acme", "k1", store.JobFailed, store.AttemptFailed)
	running := jobIn(t, db, "acme", "k2", store.JobRunning, store.AttemptRunning)
	get := func(id string) (map[string]any, string) {
		t.Helper()
		var code int
		out, errOut := captureOutput(t, func() {
			code = run(context.Background(), []string{"jobs", "get", id, "--config", cfg})
		})
		var m map[string]any
		if err := json.Unmarshal([]byte(out), &m); code != 0 || err != nil {
			t.Fatalf("router jobs get %s: exit %d, %v\nstdout:\n%s\nstderr: %s", id, code, err, out, errOut)
		}
		return m, out
	}

	m, out := get(failed)
	job, err := db.Store.GetJobAny(context.Background(), failed)
	if err != nil {
		t.Fatal(err)
	}
	want := race.NextStep(job)
	if step, _ := m["next_step"].(string); want == "" || step != want {
		t.Fatalf("router jobs get of the failed job: next_step %q, want %q (as GET /v1/jobs/{id} says)\n%s", step, want, out)
	}
	if !strings.Contains(want, "POST /v1/jobs/"+failed+"/retry") {
		t.Errorf("next_step %q does not name the retry", want)
	}

	m, out = get(running)
	if _, ok := m["next_step"]; ok {
		t.Errorf("router jobs get of the running job: %s\nwant no next_step", out)
	}
	job, err = db.Store.GetJobAny(context.Background(), running)
	if err != nil {
		t.Fatal(err)
	}
	var before bytes.Buffer
	enc := json.NewEncoder(&before)
	enc.SetIndent("", "  ")
	if err := enc.Encode(job); err != nil {
		t.Fatal(err)
	}
	if out != before.String() {
		t.Errorf("router jobs get of the running job printed\n%s\nwant, as before,\n%s", out, before.String())
	}
}
