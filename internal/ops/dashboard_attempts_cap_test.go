package ops_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/routerhq/router/internal/store"
	"github.com/routerhq/router/internal/testdb"
)

// Retries are not bounded in number, and the dashboard rendered every attempt
// of each recent job and joined every attempt's reason into one line: one
// job with 4,000 attempts made a 1.85 MB page, reloaded every 5 s. It now
// shows a job's last 10 attempts, counts the others, and lists at most 4
// distinct reasons. The tenant API still returns every attempt. Found by
// review.
func TestDashboardCapsAttemptsPerJob(t *testing.T) {
	db := testdb.New(t, store.Options{})
	ctx := context.Background()
	input := json.RawMessage(`{"a":1}`)
	fp, _ := store.Fingerprint("op", "", "", input)
	j, _, err := db.Store.CreateJob(ctx, store.NewJob{Owner: "acme", Operation: "op", IdempotencyKey: "retried", Fingerprint: fp, Route: "default", Input: input})
	if err != nil {
		t.Fatal(err)
	}
	const attempts = 40
	for seq := 1; seq <= attempts; seq++ {
		role := store.RoleRetry
		if seq == 1 {
			role = store.RolePrimary
		}
		a, err := db.Store.CreateAttempt(ctx, store.NewAttempt{JobID: j.ID, Provider: "primary", Role: role, LeaseOwner: "test"})
		if err != nil {
			t.Fatalf("attempt %d: %v", seq, err)
		}
		if err := db.Store.MarkAttemptRunning(ctx, a.ID); err != nil {
			t.Fatal(err)
		}
		// Seven statuses in turn: the last 10 attempts (#31–#40) end with 7
		// distinct reasons, three of them twice.
		out := store.AttemptOutcome{State: store.AttemptFailed, Error: map[string]any{"kind": "unavailable", "status": 500 + seq%7}}
		if err := db.Store.FinishAttempt(ctx, a.ID, out); err != nil {
			t.Fatal(err)
		}
	}
	if state, err := db.Store.SettleJob(ctx, j.ID, "every attempt failed"); err != nil || state != store.JobFailed {
		t.Fatalf("settle: %s, %v", state, err)
	}

	job := jobOn(t, dashboardOf(t, db), j.ID)
	if n := strings.Count(job, `<div class="attempt" data-provider=`); n != 10 {
		t.Errorf("the job shows %d attempts, want its last 10:\n%s", n, job)
	}
	for _, want := range []string{`data-earlier="30"`, "+30 earlier attempts not shown", "#40 <b>primary</b>", "#31 <b>primary</b>",
		"#31 primary: unavailable (HTTP 503) (×2); #32 primary: unavailable (HTTP 504) (×2); #33 primary: unavailable (HTTP 505) (×2); #34 primary: unavailable (HTTP 506); and 3 more reasons"} {
		if !strings.Contains(job, want) {
			t.Errorf("the job lacks %q:\n%s", want, job)
		}
	}
	if strings.Contains(job, "#30 ") || strings.Contains(job, "#1 ") {
		t.Errorf("the job shows an attempt before its last 10:\n%s", job)
	}

	// The tenant API and `router jobs get` read the job in full.
	full, err := db.Store.GetJobAny(ctx, j.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(full.Attempts) != attempts {
		t.Errorf("GetJobAny: %d attempts, want all %d", len(full.Attempts), attempts)
	}
}

// jobOn is the part of the dashboard page that shows job id.
func jobOn(t *testing.T, page, id string) string {
	t.Helper()
	i := strings.Index(page, `<div class="job" data-job="`+id+`"`)
	if i < 0 {
		t.Fatalf("the dashboard does not show job %s:\n%s", id, page)
	}
	job := page[i:]
	if k := strings.Index(job[1:], `<div class="job" `); k >= 0 {
		job = job[:k+1]
	} else if k := strings.Index(job, "</section>"); k >= 0 {
		job = job[:k]
	}
	return job
}
