package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/routerhq/router/internal/store"
	"github.com/routerhq/router/internal/testdb"
)

// jobIn creates a job of owner (its first attempt on provider "p" in flight)
// and puts it and the attempt in the given states, as the race would.
func jobIn(t *testing.T, db *testdb.DB, owner, key, jobState, attemptState string) string {
	t.Helper()
	ctx := context.Background()
	input := json.RawMessage(`{"subject":"Login","body":"I cannot log in."}`)
	fp, err := store.Fingerprint("triage", "2", "", input)
	if err != nil {
		t.Fatal(err)
	}
	job, created, err := db.Store.CreateJob(ctx, store.NewJob{
		Owner: owner, Operation: "triage", IdempotencyKey: key, Fingerprint: fp, PromptVersion: "2", Route: "default",
		Input: input, LeaseOwner: "gone", LeaseFor: time.Minute, First: &store.FirstAttempt{Provider: "p", Model: "m", Role: "primary"},
	})
	if err != nil || !created {
		t.Fatalf("create job: %v created=%v", err, created)
	}
	if _, err := db.Pool.Exec(ctx, `UPDATE attempts SET state = $2, finished_at = now() WHERE job_id = $1`, job.ID, attemptState); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Pool.Exec(ctx, `UPDATE jobs SET state = $2 WHERE id = $1`, job.ID, jobState); err != nil {
		t.Fatal(err)
	}
	return job.ID
}

// `router jobs list` shows an operator the jobs of every owner that have not
// ended — the unknown ones with the attempts to resolve — and never an ended
// job; --owner and --state narrow it, --json prints the jobs in full.
func TestJobsListShowsOpenJobsOfEveryOwner(t *testing.T) {
	db := testdb.New(t, store.Options{})
	cfg := writeConfig(t, db, "  - name: p\n    type: scripted")
	unknownA := jobIn(t, db, "acme", "k1", store.JobUnknown, store.AttemptUnknown)
	unknownB := jobIn(t, db, "globex", "k2", store.JobUnknown, store.AttemptUnknown)
	running := jobIn(t, db, "acme", "k3", store.JobRunning, store.AttemptRunning)
	ended := jobIn(t, db, "acme", "k4", store.JobFailed, store.AttemptFailed)
	list := func(args ...string) (int, string, string) {
		t.Helper()
		var code int
		stdout, stderr := captureOutput(t, func() {
			code = run(context.Background(), append([]string{"jobs", "list", "--config", cfg}, args...))
		})
		return code, stdout, stderr
	}

	code, out, errOut := list("--state", "unknown")
	if code != 0 || !strings.Contains(out, unknownA) || !strings.Contains(out, unknownB) || strings.Contains(out, running) || strings.Contains(out, ended) {
		t.Fatalf("--state unknown: exit %d, stdout:\n%s\nstderr: %s\nwant both owners' unknown jobs and nothing else", code, out, errOut)
	}
	if !strings.Contains(out, "p #1") || !strings.Contains(out, "globex") {
		t.Fatalf("--state unknown does not name the unknown attempt (p #1) or the owner:\n%s", out)
	}
	code, out, _ = list()
	if code != 0 || !strings.Contains(out, running) || strings.Contains(out, ended) {
		t.Fatalf("every open job: exit %d, stdout:\n%s\nwant the running job and no ended one", code, out)
	}
	code, out, _ = list("--owner", "globex", "--json")
	var jobs []store.Job
	if err := json.Unmarshal([]byte(out), &jobs); code != 0 || err != nil {
		t.Fatalf("--json: exit %d, %v, stdout:\n%s", code, err, out)
	}
	if len(jobs) != 1 || jobs[0].ID != unknownB || len(jobs[0].Attempts) != 1 || jobs[0].Attempts[0].State != store.AttemptUnknown {
		t.Fatalf("--owner globex --json: %+v, want only %s with its unknown attempt", jobs, unknownB)
	}
	if code, out, errOut = list("--limit", "1"); code != 0 || strings.Count(out, "\n") != 2 || !strings.Contains(errOut, "--limit") {
		t.Fatalf("--limit 1: exit %d, stdout:\n%s\nstderr: %s\nwant the header and one job, and a note on stderr", code, out, errOut)
	}
	for _, bad := range [][]string{{"--state", "failed"}, {"--limit", "0"}} {
		code, out, errOut = list(bad...)
		if code != 2 || out != "" || !strings.Contains(errOut, bad[0]) {
			t.Errorf("router jobs list %s: exit %d, stdout %q, stderr %q; want exit 2 naming %s", strings.Join(bad, " "), code, out, errOut, bad[0])
		}
	}
	if code, _, errOut = list("--owner", "nobody"); code != 0 || !strings.Contains(errOut, "no job") {
		t.Fatalf("no match: exit %d, stderr %q", code, errOut)
	}

}
