package api_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/routerhq/router/internal/api"
	"github.com/routerhq/router/internal/chat"
	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/store"
)

// A retry of a failed job whose route this replica does not configure (a
// rolling config change renamed or removed it, or added it on a newer
// replica) is refused before anything is written, as the prompt-version case
// is: 503 route-unavailable with Retry-After, naming the route, the job still
// failed with no new attempt and the retry's Idempotency-Key not taken — with
// and without a key, for a prompt job and for a chat job (whose route is its
// model) alike. Once no rolling update can be under way (the job is older
// than the replica, up for longer than rolloutWindow), a final 422
// route-retired naming what is left: a new job (or chat call) on one of the
// configured routes, which it lists (a failed job cannot be cancelled). It used to answer 200 running and take the key, for a
// round this replica could only hand over (rjobs13).
func TestRetryOnReplicaWithoutTheRoute(t *testing.T) {
	b := setup(t, options{respond: func(int, *providers.Request) providers.Step {
		return providers.Step{Status: http.StatusBadRequest}
	}})
	ctx := context.Background()
	failed := b.create(t, acmeKey, "retry-route-1", triageBody("Down"), "Prefer", "wait=30")
	if failed.body["state"] != "failed" {
		t.Fatalf("prompt job: %d %s", failed.status, failed.raw)
	}
	promptJob := failed.job()
	if _, err := b.db.Pool.Exec(ctx, `UPDATE jobs SET route = 'renamed' WHERE id = $1`, promptJob); err != nil {
		t.Fatal(err)
	}
	op := chat.Operation("gone")
	input := json.RawMessage(`{"messages":[{"role":"user","content":"hi"}]}`)
	fp, err := store.Fingerprint(op, "", "gone", input)
	if err != nil {
		t.Fatal(err)
	}
	cj, created, err := b.db.Store.CreateJob(ctx, store.NewJob{Owner: "acme", Operation: op, IdempotencyKey: "retry-route-chat",
		Fingerprint: fp, Route: "gone", Input: input})
	if err != nil || !created {
		t.Fatalf("create chat job: %v created=%v", err, created)
	}
	if state, err := b.db.Store.SettleJob(ctx, cj.ID, "its route was removed"); err != nil || state != store.JobFailed {
		t.Fatalf("settle: %s, %v; want failed", state, err)
	}
	jobs := []struct{ id, route string }{{promptJob, "renamed"}, {cj.ID, "gone"}}
	attempts := map[string]int{}
	for _, j := range jobs {
		attempts[j.id] = b.count(t, `SELECT count(*) FROM attempts WHERE job_id = $1`, j.id)
	}
	unchanged := func(id, what string) {
		t.Helper()
		if n := b.count(t, `SELECT count(*) FROM jobs WHERE id = $1 AND state = 'failed' AND retry_key IS NULL`, id); n != 1 {
			t.Fatalf("%s: job %s is no longer failed, or holds the retry's key", what, id)
		}
		if n := b.count(t, `SELECT count(*) FROM attempts WHERE job_id = $1`, id); n != attempts[id] {
			t.Fatalf("%s: job %s has %d attempts, want %d (nothing written)", what, id, n, attempts[id])
		}
	}
	retry := func(id string, key bool) reply {
		if key {
			return b.do(t, "POST", "/v1/jobs/"+id+"/retry", acmeKey, "", "Idempotency-Key", "retry-route-once")
		}
		return b.do(t, "POST", "/v1/jobs/"+id+"/retry", acmeKey, "")
	}
	for _, j := range jobs {
		for i, key := range []bool{false, true, true} { // the last: a resend with the key, not taken before
			r := retry(j.id, key)
			typ, _ := r.body["type"].(string)
			if r.status != http.StatusServiceUnavailable || !strings.HasSuffix(typ, "route-unavailable") ||
				r.header.Get("Retry-After") != "5" || !strings.Contains(string(r.raw), j.route) || r.body["job_id"] != j.id {
				t.Fatalf("retry %d (key %v) of job %s on a replica without route %q: %d Retry-After %q %s; want 503 route-unavailable naming the route, Retry-After 5",
					i+1, key, j.id, j.route, r.status, r.header.Get("Retry-After"), r.raw)
			}
			unchanged(j.id, "a retry refused 503")
		}
	}
	// Jobs from before this replica started, up for an hour: no rolling
	// update is under way, the route is gone for good: a final 422.
	if _, err := b.db.Pool.Exec(ctx, `UPDATE jobs SET created_at = now() - interval '2 hours' WHERE id = ANY($1)`, []string{promptJob, cj.ID}); err != nil {
		t.Fatal(err)
	}
	api.SetStarted(b.api, time.Now().Add(-time.Hour))
	for _, j := range jobs {
		for _, key := range []bool{false, true} {
			r := retry(j.id, key)
			typ, _ := r.body["type"].(string)
			detail, _ := r.body["detail"].(string)
			if r.status != http.StatusUnprocessableEntity || !strings.HasSuffix(typ, "route-retired") || r.header.Get("Retry-After") != "" ||
				!strings.Contains(detail, j.route) || !strings.Contains(detail, "new Idempotency-Key") || !strings.Contains(detail, "(default)") {
				t.Fatalf("retry (key %v) of job %s whose route %q was retired: %d Retry-After %q %s; want 422 route-retired naming the route, a new request and the configured routes",
					key, j.id, j.route, r.status, r.header.Get("Retry-After"), r.raw)
			}
			unchanged(j.id, "a retry refused 422")
		}
	}
	// On a replica that configures the route the same retry runs.
	if _, err := b.db.Pool.Exec(ctx, `UPDATE jobs SET route = 'default' WHERE id = $1`, promptJob); err != nil {
		t.Fatal(err)
	}
	if r := retry(promptJob, true); r.status != http.StatusOK || r.header.Get("Idempotent-Replayed") != "" {
		t.Fatalf("the retry on a replica with the route: %d %s; want 200, a new round", r.status, r.raw)
	}
}
