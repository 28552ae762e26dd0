package api_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
)

// A request whose Idempotency-Key row another transaction holds (an
// operator's open psql transaction, a replica cut off mid-transaction) is
// answered 503 busy with Retry-After once the store's bounded lock wait
// ends — nothing stored, resend with the same key — not a 500 that reads
// as the router's bug. Found by review.
func TestHeldKeyIsA503Busy(t *testing.T) {
	b := setup(t, options{})
	ctx := context.Background()
	if r := b.create(t, acmeKey, "held-1", triageBody("Login broken"), "Prefer", "wait=30"); r.status != http.StatusCreated {
		t.Fatalf("first: %d %s", r.status, r.raw)
	}
	chatBody := `{"model":"default","messages":[{"role":"user","content":"hi"}]}`
	if r := b.do(t, "POST", "/v1/chat/completions", acmeKey, chatBody, "Idempotency-Key", "held-2"); r.status != http.StatusOK {
		t.Fatalf("first chat: %d %s", r.status, r.raw)
	}
	tx, err := b.db.Pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx) //nolint:errcheck
	if _, err := tx.Exec(ctx, `SELECT FROM idempotency_keys WHERE idempotency_key IN ('held-1', 'held-2') FOR UPDATE`); err != nil {
		t.Fatal(err)
	}
	r := b.create(t, acmeKey, "held-1", triageBody("Login broken"))
	if r.status != http.StatusServiceUnavailable || r.header.Get("Retry-After") != "1" || !strings.Contains(string(r.raw), `problems/busy"`) {
		t.Errorf("POST /v1/jobs with a held key: %d Retry-After %q %s; want 503 busy with Retry-After 1", r.status, r.header.Get("Retry-After"), r.raw)
	}
	r = b.do(t, "POST", "/v1/chat/completions", acmeKey, chatBody, "Idempotency-Key", "held-2")
	if r.status != http.StatusServiceUnavailable || r.header.Get("Retry-After") != "1" || !strings.Contains(string(r.raw), `"code":"busy"`) {
		t.Errorf("chat with a held key: %d Retry-After %q %s; want 503 busy with Retry-After 1", r.status, r.header.Get("Retry-After"), r.raw)
	}
}
