package api_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/routerhq/router/internal/providers"
)

// A keyed chat call whose job was stored and then failed before any attempt
// (no eligible provider: a breaker opened between the plan and the run) is
// answered 503 no_eligible_provider, and every resend with the key answers
// that failure again: the key stays bound to the failed job. The answer says
// how to go on — a retry of the job, or a new key — as the 502 for a job
// that failed after its attempts does; it used to say only when a breaker
// probes again, which a resend with the key never reaches. Found by review.
func TestKeyedChatFailedBeforeAnyAttemptSaysHowToGoOn(t *testing.T) {
	b := setup(t, options{respond: func(int, *providers.Request) providers.Step { return providers.Step{Status: 500} }})
	body := `{"model":"default","messages":[{"role":"user","content":"hi"}]}`
	first := b.do(t, http.MethodPost, chatPath, acmeKey, body, "Idempotency-Key", "no-eligible-keyed")
	id := first.header.Get("X-Router-Job-Id")
	if first.status != http.StatusBadGateway || id == "" {
		t.Fatalf("first call: %d %s; want 502 with the job's id", first.status, first.raw)
	}
	// The job as the race leaves it when no target was eligible at its run:
	// failed with no attempt, its error naming no eligible provider.
	for _, q := range []string{`DELETE FROM attempts WHERE job_id = $1`,
		`UPDATE jobs SET error = 'no eligible provider on route default (primary: breaker open)' WHERE id = $1`} {
		if _, err := b.db.Pool.Exec(context.Background(), q, id); err != nil {
			t.Fatal(err)
		}
	}
	again := b.do(t, http.MethodPost, chatPath, acmeKey, body, "Idempotency-Key", "no-eligible-keyed")
	e, _ := again.body["error"].(map[string]any)
	msg, _ := e["message"].(string)
	if again.status != http.StatusServiceUnavailable || e["code"] != "no_eligible_provider" {
		t.Fatalf("resend: %d %s; want 503 no_eligible_provider", again.status, again.raw)
	}
	if !strings.Contains(msg, "POST /v1/jobs/"+id+"/retry") || !strings.Contains(msg, "new Idempotency-Key") {
		t.Fatalf("message %q: want the way on (a retry of the job, or a new Idempotency-Key), since a resend with this key answers this failure again", msg)
	}
	if again.header.Get("X-Should-Retry") != "false" {
		t.Fatalf("X-Should-Retry %q; want false: an SDK's resend with the key gets the same answer", again.header.Get("X-Should-Retry"))
	}
}
