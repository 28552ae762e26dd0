package api_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"
)

// A's key expired (its retention passed) and request B claimed it: A's
// client resending A's request byte for byte is told just that — the key
// expired at T and another request took it, job A is still readable at GET
// /v1/jobs/<A>, and running the request again needs a new key — not to
// "resend the original request unchanged", which it has just done. Found by
// review.
func TestKeyReusedAfterExpiryAdvice(t *testing.T) {
	b := setup(t, options{})
	a := b.create(t, acmeKey, "exp-1", triageBody("A"), "Prefer", "wait=10")
	if a.status != http.StatusCreated {
		t.Fatalf("A: %d %s", a.status, a.raw)
	}
	var expired time.Time
	if err := b.db.Pool.QueryRow(context.Background(),
		`UPDATE idempotency_keys SET expires_at = now() - interval '1 second' RETURNING expires_at`).Scan(&expired); err != nil {
		t.Fatal(err)
	}
	if n := b.create(t, acmeKey, "exp-1", triageBody("B"), "Prefer", "wait=10"); n.status != http.StatusCreated {
		t.Fatalf("B: %d %s", n.status, n.raw)
	}
	r := b.create(t, acmeKey, "exp-1", triageBody("A")) // A's request, byte for byte
	detail, _ := r.body["detail"].(string)
	if r.status != http.StatusConflict || strings.Contains(detail, "resend the original request unchanged") || !strings.Contains(detail, "retention") {
		t.Fatalf("A's own request resent after its key was taken over: %d %q", r.status, detail)
	}
	for _, want := range []string{"job " + a.job(), "GET /v1/jobs/" + a.job(), expired.UTC().Format(time.RFC3339), "new Idempotency-Key"} {
		if !strings.Contains(detail, want) {
			t.Errorf("the 409's detail does not say %q: %q", want, detail)
		}
	}
	if r.header.Get("X-Router-Job-Id") != a.job() {
		t.Errorf("X-Router-Job-Id %q; want A's job %s, which the 409 names", r.header.Get("X-Router-Job-Id"), a.job())
	}
	// Another owner sending A's request with the same key is not told of
	// acme's job: its key is its own (a new job).
	if g := b.create(t, globexKey, "exp-1", triageBody("A"), "Prefer", "wait=10"); g.status != http.StatusCreated {
		t.Fatalf("globex with the same key: %d %s", g.status, g.raw)
	}
	// A third request under the key, never held by a job of its own, gets
	// the usual advice, which now says that a key may have expired and been
	// reused.
	c := b.create(t, acmeKey, "exp-1", triageBody("C"))
	detail, _ = c.body["detail"].(string)
	if c.status != http.StatusConflict || !strings.Contains(detail, "resend the original request unchanged") ||
		!strings.Contains(detail, "retention") || strings.Contains(detail, a.job()) || c.header.Get("X-Router-Job-Id") != "" {
		t.Fatalf("a different request under a key held by another: %d %q (X-Router-Job-Id %q)", c.status, detail, c.header.Get("X-Router-Job-Id"))
	}
}
