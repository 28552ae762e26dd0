package chaos_test

import (
	"context"
	"slices"
	"testing"

	"github.com/google/uuid"

	"github.com/routerhq/router/internal/chaos"
	"github.com/routerhq/router/internal/store"
	"github.com/routerhq/router/internal/testdb"
)

// history writes rows straight into the tables, so a test can build histories
// the router would never write and see the checker catch them.
type history struct {
	t  *testing.T
	db *testdb.DB
}

func (h history) exec(sql string, args ...any) {
	h.t.Helper()
	if _, err := h.db.Pool.Exec(context.Background(), sql, args...); err != nil {
		h.t.Fatalf("%s: %v", sql, err)
	}
}

// job inserts a job and, when withKey, its idempotency key row.
func (h history) job(owner, key, state string, withKey bool) string {
	h.t.Helper()
	id := uuid.NewString()
	h.exec(`INSERT INTO jobs (id, owner, operation, idempotency_key, fingerprint, prompt_version, route, input, state)
	        VALUES ($1, $2, 'triage', $3, '\x01', '1', 'default', '{}', $4)`, id, owner, key, state)
	if withKey {
		h.exec(`INSERT INTO idempotency_keys (owner, operation, idempotency_key, job_id, fingerprint)
		        VALUES ($1, 'triage', $2, $3, '\x01')`, owner, key, id)
	}
	return id
}

func (h history) attempt(job string, seq int, state string, leaseSeconds int) string {
	h.t.Helper()
	id := uuid.NewString()
	h.exec(`INSERT INTO attempts (id, job_id, seq, provider, role, state, read_version, lease_owner, lease_expires_at)
	        VALUES ($1, $2, $3, 'p', 'primary', $4, 1, 'r', now() + make_interval(secs => $5))`,
		id, job, seq, state, leaseSeconds)
	return id
}

func (h history) succeed(job, attempt string) {
	h.exec(`UPDATE jobs SET state = 'succeeded', completed_by = $2, result = '{}' WHERE id = $1`, job, attempt)
}

func rules(vs []chaos.Violation) []string {
	var out []string
	for _, v := range vs {
		out = append(out, v.Rule)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// A history that keeps every guarantee has no violation; one that breaks each
// guarantee once has exactly one violation of each rule.
func TestCheckerJudgesHistories(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := testdb.New(t, store.Options{})
	if err := chaos.InstallAudit(ctx, db.Pool); err != nil {
		t.Fatal(err)
	}
	h := history{t, db}

	// A clean history: a succeeded job with a winner and a loser, a failed job,
	// an unknown job, a running job whose attempt holds a live lease, and a
	// hedge created while the first attempt was running (allowed).
	ok := h.job("acme", "k-ok", "running", true)
	won := h.attempt(ok, 1, "running", 60)
	h.attempt(ok, 2, "running", 60)
	h.exec(`UPDATE attempts SET state = 'won' WHERE id = $1`, won)
	h.exec(`UPDATE attempts SET state = 'lost' WHERE job_id = $1 AND seq = 2`, ok)
	h.succeed(ok, won)
	failed := h.job("acme", "k-failed", "failed", true)
	h.attempt(failed, 1, "failed", 0)
	unknown := h.job("acme", "k-unknown", "unknown", true)
	h.attempt(unknown, 1, "unknown", 0)
	live := h.job("acme", "k-live", "running", true)
	h.attempt(live, 1, "running", 60)
	acks := []chaos.Ack{{Owner: "acme", Key: "k-ok", JobID: ok}, {Owner: "acme", Key: "k-live", JobID: live}}

	vs, err := chaos.Check(ctx, db.Pool, acks)
	if err != nil {
		t.Fatal(err)
	}
	if len(vs) != 0 {
		t.Fatalf("a clean history has violations: %v", vs)
	}
	if j, a, err := chaos.Unsettled(ctx, db.Pool); err != nil || j != 1 || a != 1 {
		t.Fatalf("unsettled = %d jobs, %d attempts (%v); want the one live job and attempt", j, a, err)
	}

	// Now break each guarantee once.
	h.job("acme", "k-ok", "pending", false) // a second job for a key
	h.exec(`UPDATE idempotency_keys SET job_id = $1 WHERE idempotency_key = 'k-failed'`, unknown)
	two := h.job("acme", "k-two", "running", true)
	a1 := h.attempt(two, 1, "running", 60)
	h.attempt(two, 2, "running", 60)
	h.exec(`UPDATE attempts SET state = 'won' WHERE job_id = $1`, two) // two winners
	h.succeed(two, a1)
	h.attempt(unknown, 2, "running", 60) // created while attempt 1 is unknown
	stale := h.job("acme", "k-stale", "running", true)
	h.attempt(stale, 1, "running", -5) // its router died and nobody noticed
	acks = append(acks,
		chaos.Ack{Owner: "acme", Key: "k-ghost", JobID: uuid.NewString()},
		chaos.Ack{Owner: "acme", Key: "k-other", JobID: ok})

	vs, err = chaos.Check(ctx, db.Pool, acks)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{chaos.RuleAckMissing, chaos.RuleBlocking, chaos.RuleDoubleWinner, chaos.RuleDuplicateJob,
		chaos.RuleKeyMismatch, chaos.RuleStaleAttempt, chaos.RuleStaleRunning, chaos.RuleWinnerMismatch}
	slices.Sort(want)
	if got := rules(vs); !slices.Equal(got, want) {
		t.Fatalf("rules broken = %v, want %v\n%v", got, want, vs)
	}
	for _, v := range vs {
		t.Log(v)
	}
}
