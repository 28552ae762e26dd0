package api_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/routerhq/router/internal/api"
	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/store"
)

// The owner at max_live_jobs on this replica: a keyed request refused by the
// limiter is let through as a replay when its key holds a job. That look-up
// was a plain read (KeyHeld), which does not see another replica's claim of
// the same request still committing: the resend got 429 too-many-live-jobs,
// "nothing was stored", for the job that committed a moment later
// (docs/idempotency.md: a client whose answer was lost never reads "not
// done" for a job that exists). It now waits for the key's writer, as the
// other refusals that say nothing was stored do (AwaitKeyHeld), and replays
// the job; a key nobody writes is still refused at once.
func TestLiveLimitWaitsForInFlightClaim(t *testing.T) {
	release := make(chan struct{})
	b := setup(t, options{
		ownerLimits: map[string]api.Limits{"acme": {MaxLiveJobs: 1}},
		respond: func(_ int, _ *providers.Request) providers.Step {
			<-release // every job stays live until the test ends
			return providers.Step{Output: validTriage}
		},
	})
	t.Cleanup(func() { close(release) }) // before the server's shutdown (cleanups run last first)
	// acme's one live job, created by this replica: its limiter is at the limit.
	if r := b.create(t, acmeKey, "live-1", triageBody("One")); r.status != http.StatusAccepted {
		t.Fatalf("the owner's live job: %d %s", r.status, r.raw)
	}

	const key = "inflight-live"
	const input = `{"subject":"A","body":"I cannot log in since yesterday."}`
	body := `{"prompt":"triage","input":` + input + `}`
	fp, err := store.Fingerprint("triage", "", "", json.RawMessage(input))
	if err != nil {
		t.Fatal(err)
	}
	const jobID = "0193b0f2-6c1e-7a7b-9d2e-3c4b5a6d7e95"
	tx, pid := inFlightClaim(t, b, jobID, key, "3", input, fp)
	replayAfterCommit(t, b, tx, pid, sendKeyed(t, b, key, body), key, body, jobID)

	// A key nobody holds or writes: the limit's refusal, as before.
	r := <-sendKeyed(t, b, "free-live", triageBody("Free"))
	if r.status != http.StatusTooManyRequests || !strings.Contains(string(r.raw), "too-many-live-jobs") || r.header.Get("Retry-After") == "" {
		t.Fatalf("a new key, the owner at its limit: %d %s; want 429 too-many-live-jobs with Retry-After", r.status, r.raw)
	}
	if n := b.count(t, `SELECT count(*) FROM idempotency_keys WHERE idempotency_key = 'free-live'`); n != 0 {
		t.Fatalf("the refused request left %d key rows", n)
	}
}
