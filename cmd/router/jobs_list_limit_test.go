package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/routerhq/router/internal/store"
	"github.com/routerhq/router/internal/testdb"
)

// `router jobs list --limit N` says the list was cut (on stderr, for the
// table and for --json, whose stdout stays one JSON array) only when more
// than N jobs match: with exactly N it used to say "the N oldest shown;
// --limit to see more", and with --json nothing said a list was cut. Found
// by review.
func TestJobsListSaysCutOnlyWhenMoreMatch(t *testing.T) {
	db := testdb.New(t, store.Options{})
	cfg := writeConfig(t, db, "  - name: p\n    type: scripted")
	ids := []string{
		jobIn(t, db, "acme", "k1", store.JobUnknown, store.AttemptUnknown),
		jobIn(t, db, "acme", "k2", store.JobRunning, store.AttemptRunning),
		jobIn(t, db, "globex", "k3", store.JobUnknown, store.AttemptUnknown),
	}
	list := func(args ...string) (int, string, string) {
		t.Helper()
		var code int
		stdout, stderr := captureOutput(t, func() {
			code = run(context.Background(), append([]string{"jobs", "list", "--config", cfg}, args...))
		})
		return code, stdout, stderr
	}
	const note = "only the"
	decode := func(flags, out string) []store.Job {
		t.Helper()
		var jobs []store.Job
		if err := json.Unmarshal([]byte(out), &jobs); err != nil {
			t.Fatalf("%s: stdout is not one JSON array (%v):\n%s", flags, err, out)
		}
		return jobs
	}

	// Exactly N: nothing was left out, nothing to say.
	code, out, errOut := list("--limit", "3")
	if code != 0 || strings.Count(out, "\n") != 4 || strings.Contains(errOut, note) || strings.Contains(errOut, "--limit") {
		t.Errorf("--limit 3 with 3 jobs: exit %d, stdout:\n%s\nstderr: %q\nwant the header and 3 jobs and no note", code, out, errOut)
	}
	code, out, errOut = list("--limit", "3", "--json")
	if jobs := decode("--limit 3 --json", out); code != 0 || len(jobs) != 3 || strings.Contains(errOut, note) {
		t.Errorf("--limit 3 --json with 3 jobs: exit %d, %d jobs, stderr %q; want 3 and no note", code, len(jobs), errOut)
	}

	// N+1: the oldest N, and a note that says so and how to see the rest.
	code, out, errOut = list("--limit", "2")
	if code != 0 || strings.Count(out, "\n") != 3 || !strings.Contains(out, ids[0]) || !strings.Contains(out, ids[1]) || strings.Contains(out, ids[2]) ||
		!strings.Contains(errOut, "only the 2 oldest shown") || !strings.Contains(errOut, "raise --limit") {
		t.Errorf("--limit 2 with 3 jobs: exit %d, stdout:\n%s\nstderr: %q\nwant the 2 oldest and a note on stderr", code, out, errOut)
	}
	code, out, errOut = list("--limit", "2", "--json")
	jobs := decode("--limit 2 --json", out)
	if code != 0 || len(jobs) != 2 || jobs[0].ID != ids[0] || jobs[1].ID != ids[1] || !strings.Contains(errOut, "only the 2 oldest shown") {
		t.Errorf("--limit 2 --json with 3 jobs: exit %d, %d jobs, stderr %q; want the 2 oldest and a note on stderr", code, len(jobs), errOut)
	}
}

// At the largest --limit the note does not tell the operator to raise it.
func TestJobsListAtItsLargestLimitSaysToNarrow(t *testing.T) {
	db := testdb.New(t, store.Options{})
	cfg := writeConfig(t, db, "  - name: p\n    type: scripted")
	if _, err := db.Pool.Exec(context.Background(), `
		INSERT INTO jobs (id, owner, operation, idempotency_key, fingerprint, prompt_version, route, input, state)
		SELECT gen_random_uuid(), 'acme', 'triage', 'k' || i, '\x00', '1', 'default', '{}', 'pending'
		FROM generate_series(1, 10001) i`); err != nil {
		t.Fatal(err)
	}
	var code int
	_, errOut := captureOutput(t, func() {
		code = run(context.Background(), []string{"jobs", "list", "--config", cfg, "--limit", "10000", "--json"})
	})
	if code != 0 || !strings.Contains(errOut, "only the 10000 oldest shown") || strings.Contains(errOut, "raise --limit") ||
		!strings.Contains(errOut, "narrow the list with --state or --owner") {
		t.Errorf("--limit 10000 with 10001 jobs: exit %d, stderr %q; want a note to narrow the list, not to raise --limit", code, errOut)
	}
}
