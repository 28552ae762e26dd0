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

// Two transactions inserting `starting` attempts of one job at once (two
// replicas recovering it) break SPEC §3's blocking rule, and the audit must
// see it although neither saw the other's row uncommitted. Found by review:
// the trigger looked for siblings under READ COMMITTED only, so the race it
// exists to catch went unreported.
func TestAuditSeesConcurrentInserts(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := testdb.New(t, store.Options{})
	if err := chaos.InstallAudit(ctx, db.Pool); err != nil {
		t.Fatal(err)
	}
	h := history{t, db}
	job := h.job("acme", "k-concurrent", "running", true)

	insert := `INSERT INTO attempts (id, job_id, seq, provider, role, state, read_version, lease_owner, lease_expires_at)
	        VALUES ($1, $2, $3, 'p', 'primary', 'starting', 1, 'r', now() + interval '1 minute')`
	tx1, err := db.Pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx1.Rollback(ctx)
	if _, err := tx1.Exec(ctx, insert, uuid.NewString(), job, 1); err != nil {
		t.Fatal(err)
	}
	tx2, err := db.Pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx2.Rollback(ctx)
	var pid2 int
	if err := tx2.QueryRow(ctx, `SELECT pg_backend_pid()`).Scan(&pid2); err != nil {
		t.Fatal(err)
	}
	inserted := make(chan error, 1)
	go func() {
		_, err := tx2.Exec(ctx, insert, uuid.NewString(), job, 2)
		inserted <- err
	}()
	// The second insert either waits for the first transaction (the audit
	// serialises them) or has gone through already (it does not): find out
	// which before the first commits.
	var err2 error
	var received, done bool
	for !done {
		select {
		case err2 = <-inserted:
			received, done = true, true
		default:
			var waiting bool
			if err := db.Pool.QueryRow(ctx, `SELECT coalesce(wait_event_type = 'Lock', false) FROM pg_stat_activity WHERE pid = $1`, pid2).
				Scan(&waiting); err != nil {
				t.Fatal(err)
			}
			done = waiting
		}
	}
	if err := tx1.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if !received {
		err2 = <-inserted
	}
	if err2 != nil {
		t.Fatal(err2)
	}
	if err := tx2.Commit(ctx); err != nil {
		t.Fatal(err)
	}

	vs, err := chaos.Check(ctx, db.Pool, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(rules(vs), chaos.RuleBlocking) {
		t.Fatalf("job %s has two attempts `starting` at once, and the checker reports %v", job, vs)
	}
}
