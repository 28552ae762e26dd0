package api_test

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/store"
)

// A caller's retry of its failed job whose row another transaction holds (an
// operator's open psql session) is answered 503 busy after the store's
// transition lock wait, as a cancellation is (docs/api.md): it waited as long
// as the row was held, holding the request, a pool connection and a
// max_live_jobs admission. Found by review.
func TestRetryOfAHeldJobIsA503Busy(t *testing.T) {
	b := setup(t, options{})
	ctx := context.Background()
	input := json.RawMessage(`{"subject":"Login","body":"It fails."}`)
	fp, err := store.Fingerprint("triage", "", "", input)
	if err != nil {
		t.Fatal(err)
	}
	job, created, err := b.db.Store.CreateJob(ctx, store.NewJob{Owner: "acme", Operation: "triage", IdempotencyKey: "retry-held",
		Fingerprint: fp, PromptVersion: "3", Route: "default", Input: input})
	if err != nil || !created {
		t.Fatalf("create job: %v created=%v", err, created)
	}
	if state, err := b.db.Store.SettleJob(ctx, job.ID, "failed"); err != nil || state != store.JobFailed {
		t.Fatalf("settle: %s, %v; want failed", state, err)
	}
	release := b.holdJobRow(t, job.ID)
	expectBusy(t, b.sendWhileHeld(t, "/v1/jobs/"+job.ID+"/retry", ""), job.ID, "retry of a held job")
	if n := b.count(t, `SELECT count(*) FROM jobs WHERE state = 'failed'`); n != 1 {
		t.Fatalf("%d failed jobs after the busy retry; want the job still failed, nothing changed", n)
	}
	release()
	if r := b.do(t, "POST", "/v1/jobs/"+job.ID+"/retry", acmeKey, ""); r.status != http.StatusOK {
		t.Fatalf("retry once the row is free: %d %s", r.status, r.raw)
	}
}

// The same for a resolution of an unknown attempt through the API.
func TestResolutionOfAHeldJobIsA503Busy(t *testing.T) {
	b := setup(t, options{
		timeout:  50 * time.Millisecond,
		respond:  func(int, *providers.Request) providers.Step { return providers.Step{Hang: true} },
		fallback: func(int, *providers.Request) providers.Step { return providers.Step{Output: validTriage} },
	})
	id := b.unknownJob(t, "resolve-held")
	release := b.holdJobRow(t, id)
	expectBusy(t, b.sendWhileHeld(t, "/v1/jobs/"+id+"/attempts/1/resolve", `{"outcome":"failed"}`), id, "resolution of a held job")
	if n := b.count(t, `SELECT count(*) FROM attempts WHERE state = 'unknown'`); n != 1 {
		t.Fatalf("%d unknown attempts after the busy resolution; want the attempt still unknown", n)
	}
	release()
	if r := b.do(t, "POST", "/v1/jobs/"+id+"/attempts/1/resolve", acmeKey, `{"outcome":"failed"}`); r.status != http.StatusOK {
		t.Fatalf("resolution once the row is free: %d %s", r.status, r.raw)
	}
}

// holdJobRow holds job id's row in a transaction of its own until the
// returned release (or the test's end).
func (b *bundle) holdJobRow(t *testing.T, id string) (release func()) {
	t.Helper()
	ctx := context.Background()
	tx, err := b.db.Pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tx.Rollback(ctx) }) //nolint:errcheck
	if _, err := tx.Exec(ctx, `UPDATE jobs SET error = error WHERE id = $1`, id); err != nil {
		t.Fatal(err)
	}
	return func() {
		if err := tx.Rollback(ctx); err != nil {
			t.Fatal(err)
		}
	}
}

// sendWhileHeld POSTs body to path as acme and returns the answer, failing
// the test if none comes within a minute (a hang guard, not a timing
// assertion: the store waits 2 s).
func (b *bundle) sendWhileHeld(t *testing.T, path, body string) reply {
	t.Helper()
	got := make(chan reply, 1)
	go func() {
		r, err := send(b.srv.URL+path, "POST", acmeKey, body)
		if err != nil {
			r.raw = []byte(err.Error())
		}
		got <- r
	}()
	select {
	case r := <-got:
		return r
	case <-time.After(time.Minute):
		t.Fatalf("POST %s still waited for the held job row after a minute", path)
		return reply{}
	}
}
