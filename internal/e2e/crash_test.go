package e2e_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/routerhq/router/internal/store"
	"github.com/routerhq/router/internal/testdb"
)

// Issue 4, acceptance 5: a router killed mid-attempt loses nothing and
// duplicates nothing. The attempt becomes unknown once its lease expires, no
// second provider call happens, and a resolution completes the job exactly once.
func TestCrashMidAttemptBecomesUnknown(t *testing.T) {
	db := testdb.New(t, store.Options{})
	llm := newFakeLLM(t)
	a := startRouter(t, procOptions{dbURL: db.URL, llm: llm, gateOff: true})

	first := a.do(t, "POST", "/v1/jobs", triage("please hang"), "Idempotency-Key", "crash-1")
	if first.status != http.StatusAccepted {
		t.Fatalf("create: %d %s", first.status, first.raw)
	}
	id := first.job()
	if msg := <-llm.arrived; !strings.Contains(msg, "hang") { // the attempt reached the provider
		t.Fatalf("unexpected call %q", msg)
	}
	a.kill()

	b := startRouter(t, procOptions{dbURL: db.URL, llm: llm, gateOff: true})
	got := b.do(t, "GET", "/v1/jobs/"+id, "", "Prefer", "wait=30")
	if got.body["state"] != "unknown" {
		t.Fatalf("after the crash: %s", got.raw)
	}
	attempts := got.body["attempts"].([]any)
	if len(attempts) != 1 || attempts[0].(map[string]any)["state"] != "unknown" {
		t.Fatalf("attempts %v", attempts)
	}
	// A client retry of the same intent creates nothing.
	again := b.do(t, "POST", "/v1/jobs", triage("please hang"), "Idempotency-Key", "crash-1")
	if again.status != http.StatusAccepted || again.job() != id {
		t.Fatalf("client retry: %d %s", again.status, again.raw)
	}
	if n := llm.total(); n != 1 {
		t.Fatalf("provider calls = %d, want 1 (nothing re-dispatched)", n)
	}
	res := b.do(t, "POST", "/v1/jobs/"+id+"/attempts/1/resolve", `{"outcome":"succeeded","result":`+validTriage+`}`)
	if res.status != http.StatusOK || res.body["state"] != "succeeded" {
		t.Fatalf("resolve: %d %s", res.status, res.raw)
	}
	if r := b.do(t, "POST", "/v1/jobs/"+id+"/attempts/1/resolve", `{"outcome":"succeeded","result":`+validTriage+`}`); r.status != http.StatusConflict {
		t.Fatalf("second resolve: %d", r.status)
	}
	var won int
	if err := db.Pool.QueryRow(context.Background(), `SELECT count(*) FROM attempts WHERE state = 'won'`).Scan(&won); err != nil || won != 1 {
		t.Fatalf("won attempts = %d (%v)", won, err)
	}
	if n := llm.total(); n != 1 {
		t.Fatalf("provider calls = %d, want 1", n)
	}
}

// Issue 4, acceptance 5 (second half): a job whose process died after the row
// committed but before its first attempt started is adopted and started
// exactly once, and a second replica reads the same result. The replicas do
// not compete for the orphan here: c starts only once b is ready, by which
// time b has adopted it. The races around one orphan are the store's tests:
// an adopter against the stalled former owner creating an attempt
// (store/TestClaimOrphansNeverAdoptsAJobWhoseAttemptIsBeingCreated); two
// adopters are kept apart by ClaimOrphans' row locks (FOR UPDATE SKIP LOCKED)
// and its conditional lease.
func TestOrphanedJobStartedExactlyOnce(t *testing.T) {
	db := testdb.New(t, store.Options{})
	llm := newFakeLLM(t)
	input := json.RawMessage(`{"subject":"orphan","body":"Please help."}`)
	fp, _ := store.Fingerprint("triage", "", "", input)
	job, _, err := db.Store.CreateJob(context.Background(), store.NewJob{
		Owner: "acme", Operation: "triage", IdempotencyKey: "orphan-1", Fingerprint: fp,
		PromptVersion: "3", Route: "default", Input: input,
		LeaseOwner: "a-process-that-died", LeaseFor: time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	b := startRouter(t, procOptions{dbURL: db.URL, llm: llm, gateOff: true})
	c := startRouter(t, procOptions{dbURL: db.URL, llm: llm, gateOff: true})
	got := b.do(t, "GET", "/v1/jobs/"+job.ID, "", "Prefer", "wait=30")
	if got.body["state"] != "succeeded" {
		t.Fatalf("orphan: %s", got.raw)
	}
	if r := c.do(t, "GET", "/v1/jobs/"+job.ID, ""); r.body["state"] != "succeeded" {
		t.Fatalf("other replica sees %v", r.body["state"])
	}
	if n := llm.callsWith("orphan"); n != 1 {
		t.Fatalf("provider calls for the orphan = %d, want 1", n)
	}
	var attempts int
	if err := db.Pool.QueryRow(context.Background(), `SELECT count(*) FROM attempts WHERE job_id = $1`, job.ID).Scan(&attempts); err != nil || attempts != 1 {
		t.Fatalf("attempts = %d (%v)", attempts, err)
	}
}
