package api_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/routerhq/router/internal/breaker"
	"github.com/routerhq/router/internal/race"
	"github.com/routerhq/router/internal/store"
)

// inFlightClaim stands in for another replica's claim of key, in flight: an
// open transaction that has written the two rows a claim writes (the job,
// with minimal columns and no first attempt, and the key row, with the
// fingerprint of the request as sent), not yet committed (a synchronous
// standby, a slow fsync: docs/idempotency.md). pid is its backend's.
func inFlightClaim(t *testing.T, b *bundle, jobID, key, version, input string, fp []byte) (tx pgx.Tx, pid int) {
	t.Helper()
	ctx := context.Background()
	tx, err := b.db.Pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tx.Rollback(context.Background()) })
	if err := tx.QueryRow(ctx, `SELECT pg_backend_pid()`).Scan(&pid); err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, `INSERT INTO jobs (id, owner, operation, idempotency_key, fingerprint, prompt_version, route, input, state)
		VALUES ($1, 'acme', 'triage', $2, $3, $4, 'default', $5::jsonb, 'pending')`, jobID, key, fp, version, input); err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, `INSERT INTO idempotency_keys (owner, operation, idempotency_key, job_id, fingerprint)
		VALUES ('acme', 'triage', $1, $2, $3)`, key, jobID, fp); err != nil {
		t.Fatal(err)
	}
	return tx, pid
}

// sendKeyed posts body under key in the background.
func sendKeyed(t *testing.T, b *bundle, key, body string) <-chan reply {
	done := make(chan reply, 1)
	go func() {
		r, err := send(b.srv.URL+"/v1/jobs", "POST", acmeKey, body, "Idempotency-Key", key)
		if err != nil {
			t.Error(err)
		}
		done <- r
	}()
	return done
}

// answerOrBlocked returns the request's answer if it comes before any
// session is seen waiting for the transaction of backend pid (the request's
// look-up, waiting on the key row); nil once one is.
func answerOrBlocked(t *testing.T, b *bundle, done <-chan reply, pid int) *reply {
	t.Helper()
	for {
		select {
		case r := <-done:
			return &r
		default:
		}
		var blocked bool
		if err := b.db.Pool.QueryRow(context.Background(),
			`SELECT EXISTS (SELECT FROM pg_stat_activity WHERE $1 = ANY(pg_blocking_pids(pid)))`, pid).Scan(&blocked); err != nil {
			t.Fatal(err)
		}
		if blocked {
			return nil
		}
		time.Sleep(time.Millisecond) // polling pg_stat_activity: the server signals no lock wait
	}
}

// replayAfterCommit checks the answer to a resend of the request whose job
// (jobID) was being created under key when it was sent: an answer that came
// while the claim was still in flight must not be the final 422; once the
// claim commits, the request gets the job. Should the store's bounded wait
// for the key row have run out first (a loaded machine), the answer must be
// the retryable 503 busy, and a resend then gets the job.
func replayAfterCommit(t *testing.T, b *bundle, tx pgx.Tx, pid int, done <-chan reply, key, body, jobID string) {
	t.Helper()
	early := answerOrBlocked(t, b, done, pid)
	if early != nil {
		t.Fatalf("a resend of the request whose job was being created under its key was answered %d while the claim was "+
			"still in flight, not made to wait for it:\n%s", early.status, early.raw)
	}
	if err := tx.Commit(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n := b.count(t, `SELECT count(*) FROM jobs WHERE id = '`+jobID+`'`); n != 1 {
		t.Fatalf("the in-flight job did not commit: %d", n)
	}
	r := <-done
	if r.status == http.StatusServiceUnavailable && strings.Contains(string(r.raw), "/busy") {
		if r.header.Get("Retry-After") == "" {
			t.Fatalf("busy without Retry-After: %s", r.raw)
		}
		t.Logf("the wait for the key row ran out before the commit (a loaded machine): %s; sending again", r.raw)
		r = <-sendKeyed(t, b, key, body)
	}
	if r.job() != jobID || r.header.Get("Idempotent-Replayed") != "true" {
		t.Fatalf("a resend of the request whose job was being created under its key was answered %d, not the job %s replayed:\n%s",
			r.status, jobID, r.raw)
	}
}

// During a rolling update a replica that loads triage@4 is creating the job
// of {"prompt":"triage","prompt_version":"4",...} under key K: its claim has
// inserted the job and the key row and is committing. The same request,
// resent at that moment (a double click, a client timeout), reaches a
// replica that still loads triage@3. docs/idempotency.md: "Before answering
// such a 422, the router looks the key up ... A client whose answer was lost
// thus never reads 'not done' for a job that exists"; SPEC §5.4: concurrent
// requests with the same key make one job and all get its id. The look-up
// was a plain read that saw no row, and the caller was told 422
// unknown-prompt — final, "not done" — for the job that commits a moment
// later and runs. Found by review (ridem12 F1).
func TestReplayUnparsedWaitsForInFlightClaim(t *testing.T) {
	b := setup(t, options{})
	const key = "inflight"
	const input = `{"subject":"A","body":"I cannot log in since yesterday."}`
	body := `{"prompt":"triage","prompt_version":"4","input":` + input + `}`
	fp, err := store.Fingerprint("triage", "4", "", json.RawMessage(input))
	if err != nil {
		t.Fatal(err)
	}
	const jobID = "0193b0f2-6c1e-7a7b-9d2e-3c4b5a6d7e8f"
	tx, pid := inFlightClaim(t, b, jobID, key, "4", input, fp)
	replayAfterCommit(t, b, tx, pid, sendKeyed(t, b, key, body), key, body, jobID)
}

// Control: the same in-flight claim, resent to a replica that can parse the
// request, waits on the key's row (its claim) and gets the job once it
// commits.
func TestClaimWaitsForInFlightClaim(t *testing.T) {
	b := setup(t, options{})
	const key = "inflight-ctl"
	const input = `{"subject":"A","body":"I cannot log in since yesterday."}`
	body := `{"prompt":"triage","input":` + input + `}`
	fp, err := store.Fingerprint("triage", "", "", json.RawMessage(input))
	if err != nil {
		t.Fatal(err)
	}
	const jobID = "0193b0f2-6c1e-7a7b-9d2e-3c4b5a6d7e90"
	tx, pid := inFlightClaim(t, b, jobID, key, "3", input, fp)
	replayAfterCommit(t, b, tx, pid, sendKeyed(t, b, key, body), key, body, jobID)
}

// The same on planJob's look-up (KeyHeld): a replica whose target's context
// window is smaller (a rolling configuration change) got the resend of a
// request whose job another replica was committing, and answered the final
// 422 input-too-long ("Nothing was stored, so the Idempotency-Key may be used
// for the shortened input") for the job that committed a moment later.
func TestTooLongWaitsForInFlightClaim(t *testing.T) {
	b := setup(t, options{window: 1000})
	const key = "inflight-long"
	input := `{"subject":"Long","body":"` + strings.Repeat("word ", 3000) + `"}`
	body := `{"prompt":"triage","input":` + input + `}`
	fp, err := store.Fingerprint("triage", "", "", json.RawMessage(input))
	if err != nil {
		t.Fatal(err)
	}
	const jobID = "0193b0f2-6c1e-7a7b-9d2e-3c4b5a6d7e91"
	tx, pid := inFlightClaim(t, b, jobID, key, "3", input, fp)
	replayAfterCommit(t, b, tx, pid, sendKeyed(t, b, key, body), key, body, jobID)
}

// And on its other branch: no provider eligible (the breaker open on this
// replica) answered 503 no-eligible-provider, "nothing was stored", for the
// job another replica was committing under the key.
func TestNoEligibleWaitsForInFlightClaim(t *testing.T) {
	set := breaker.New(map[string]breaker.Settings{"primary": {ConsecutiveFailures: 1, OpenFor: time.Hour}}, breaker.Options{})
	t.Cleanup(set.Close)
	b := setup(t, options{admission: set})
	release, ok, _ := set.Admit("primary")
	if !ok {
		t.Fatal("the breaker refused before it was opened")
	}
	release(race.OutcomeFailure) // open for an hour: no provider is eligible
	const key = "inflight-ne"
	const input = `{"subject":"A","body":"I cannot log in since yesterday."}`
	body := `{"prompt":"triage","input":` + input + `}`
	fp, err := store.Fingerprint("triage", "", "", json.RawMessage(input))
	if err != nil {
		t.Fatal(err)
	}
	const jobID = "0193b0f2-6c1e-7a7b-9d2e-3c4b5a6d7e92"
	tx, pid := inFlightClaim(t, b, jobID, key, "3", input, fp)
	replayAfterCommit(t, b, tx, pid, sendKeyed(t, b, key, body), key, body, jobID)
}

// A key row held past the store's wait (an in-flight claim that does not
// end) is answered 503 busy, to be resent with the same key — the outcome is
// not known — never the final 422; once the holder has rolled back (no job),
// the resend gets the 422.
func TestReplayUnparsedHeldKeyIsBusy(t *testing.T) {
	b := setup(t, options{})
	const key = "held"
	const input = `{"subject":"A","body":"I cannot log in since yesterday."}`
	body := `{"prompt":"triage","prompt_version":"4","input":` + input + `}`
	fp, err := store.Fingerprint("triage", "4", "", json.RawMessage(input))
	if err != nil {
		t.Fatal(err)
	}
	tx, _ := inFlightClaim(t, b, "0193b0f2-6c1e-7a7b-9d2e-3c4b5a6d7e93", key, "4", input, fp)
	r := <-sendKeyed(t, b, key, body)
	if r.status != http.StatusServiceUnavailable || !strings.Contains(string(r.raw), "/busy") || r.header.Get("Retry-After") == "" ||
		!strings.Contains(string(r.raw), key) {
		t.Fatalf("a key row still being written past the wait: %d (Retry-After %q) %s; want 503 busy naming the key, Retry-After",
			r.status, r.header.Get("Retry-After"), r.raw)
	}
	if err := tx.Rollback(context.Background()); err != nil {
		t.Fatal(err)
	}
	// The key free again, the version's own refusal: on this replica,
	// started just now, 503 prompt-unavailable (a rolling update may be under
	// way), not busy.
	if r := <-sendKeyed(t, b, key, body); r.status != http.StatusServiceUnavailable || !strings.Contains(string(r.raw), "prompt-unavailable") {
		t.Fatalf("the key free again (the claim rolled back): %d %s; want the 503 prompt-unavailable of a version not loaded here", r.status, r.raw)
	}
	if n := b.count(t, `SELECT count(*) FROM idempotency_keys WHERE idempotency_key = '`+key+`'`); n != 0 {
		t.Fatalf("the look-up left %d key rows", n)
	}
}

// And while the route's breaker is half-open, the probe taken: the key looked
// up before planning (a plain read, heldBeforePlan) missed the claim still
// committing, and the refusal that followed (503 no-eligible-provider,
// "nothing was stored") was answered without looking again.
func TestHalfOpenNoEligibleWaitsForInFlightClaim(t *testing.T) {
	b, set, changes, _ := keyReleasedSetup(t)
	halfOpenPrimary(t, set, changes)
	releaseProbe, ok, why := set.Admit("primary")
	if !ok {
		t.Fatalf("the half-open breaker refused its probe: %s", why)
	}
	t.Cleanup(func() { releaseProbe(race.OutcomeFailure) })
	const key = "inflight-ho"
	const input = `{"subject":"A","body":"I cannot log in since yesterday."}`
	body := `{"prompt":"triage","input":` + input + `}`
	fp, err := store.Fingerprint("triage", "", "", json.RawMessage(input))
	if err != nil {
		t.Fatal(err)
	}
	const jobID = "0193b0f2-6c1e-7a7b-9d2e-3c4b5a6d7e94"
	tx, pid := inFlightClaim(t, b, jobID, key, "3", input, fp)
	replayAfterCommit(t, b, tx, pid, sendKeyed(t, b, key, body), key, body, jobID)
}
