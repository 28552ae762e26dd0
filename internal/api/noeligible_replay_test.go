package api_test

import (
	"context"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/routerhq/router/internal/breaker"
	"github.com/routerhq/router/internal/race"
)

// expireAfterKeyHeld ends a key's retention (on another connection) as soon
// as the API's look-up of it (Store.KeyHeld) has answered, when armed: the
// key is held at the look-up and released at the claim.
type expireAfterKeyHeld struct {
	pool  atomic.Pointer[pgxpool.Pool]
	key   atomic.Pointer[string]
	fired atomic.Bool
}

type keyHeldQuery struct{}

func (e *expireAfterKeyHeld) TraceQueryStart(ctx context.Context, _ *pgx.Conn, d pgx.TraceQueryStartData) context.Context {
	if strings.Contains(d.SQL, "SELECT EXISTS (SELECT 1 FROM idempotency_keys") {
		return context.WithValue(ctx, keyHeldQuery{}, true)
	}
	return ctx
}

func (e *expireAfterKeyHeld) TraceQueryEnd(ctx context.Context, _ *pgx.Conn, _ pgx.TraceQueryEndData) {
	if ctx.Value(keyHeldQuery{}) == nil {
		return
	}
	if k := e.key.Swap(nil); k != nil {
		tag, err := e.pool.Load().Exec(context.Background(),
			`UPDATE idempotency_keys SET expires_at = now() - interval '1 second' WHERE idempotency_key = $1`, *k)
		e.fired.Store(err == nil && tag.RowsAffected() == 1)
	}
}

// With no provider eligible, a request whose key holds a job is let through
// to replay it; should the key's retention pass between that look-up and the
// claim, the claim must create nothing and the caller get the 503 (SPEC
// §4.4: nothing about a rejected request is stored). It stored a new pending
// job and answered 202. Found by review.
func TestNoEligibleReplayWhoseKeyExpiresBeforeItsClaim(t *testing.T) {
	set := breaker.New(map[string]breaker.Settings{"primary": {ConsecutiveFailures: 1, OpenFor: time.Hour}}, breaker.Options{})
	t.Cleanup(set.Close)
	tr := &expireAfterKeyHeld{}
	b := setup(t, options{admission: set, tracer: tr, retention: time.Hour})
	tr.pool.Store(b.db.Pool)

	body := triageBody("Replayed")
	if r := b.create(t, acmeKey, "ne-key", body, "Prefer", "wait=30"); r.status != http.StatusCreated {
		t.Fatalf("first job: %d %s", r.status, r.raw)
	}
	release, ok, _ := set.Admit("primary")
	if !ok {
		t.Fatal("the breaker refused before it was opened")
	}
	release(race.OutcomeFailure) // open for an hour: no provider is eligible
	if r := b.create(t, acmeKey, "ne-new", triageBody("New")); r.status != http.StatusServiceUnavailable {
		t.Fatalf("a new key with no eligible provider: %d %s", r.status, r.raw)
	}
	if r := b.create(t, acmeKey, "ne-key", body); r.status != http.StatusOK || r.header.Get("Idempotent-Replayed") != "true" {
		t.Fatalf("a replay with no eligible provider: %d %s", r.status, r.raw)
	}

	key := "ne-key"
	tr.key.Store(&key)
	r := b.create(t, acmeKey, "ne-key", body)
	if !tr.fired.Load() {
		t.Fatal("the key's retention was not ended between the look-up and the claim")
	}
	if r.status != http.StatusServiceUnavailable || !strings.Contains(string(r.raw), "no-eligible-provider") {
		t.Fatalf("replay whose key expired before its claim, no provider eligible: %d %s; want the 503", r.status, r.raw)
	}
	if n := b.count(t, `SELECT count(*) FROM jobs WHERE idempotency_key = 'ne-key'`); n != 1 {
		t.Fatalf("%d jobs for the key; want 1, nothing stored by the refusal", n)
	}
}
