package maintenance_test

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/routerhq/router/internal/maintenance"
	"github.com/routerhq/router/internal/store"
	"github.com/routerhq/router/internal/testdb"
)

// The lease is one row (leader_leases). A session that holds it — an
// operator's transaction left open in psql — keeps every replica's renewal
// out; the renewal is logged as that (the row is held, by another session),
// not as a database that did not answer, which would send the operator to
// the network instead of to the session. Once the session ends, the next
// renewal leads again.
func TestLeaderRenewalBlockedByAHeldRowSaysSo(t *testing.T) {
	db := testdb.New(t, store.Options{})
	ctx := context.Background()
	var logs bytes.Buffer // written by Once only, on this goroutine
	e := maintenance.NewElector(db.Store, "maintenance", "replica-a", 3*time.Second, slog.New(slog.NewTextHandler(&logs, nil)))
	if !e.Once(ctx) {
		t.Fatal("the replica did not lead at first")
	}
	tx, err := db.Pool.Begin(ctx) // an operator's session left open on the row
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	if _, err := tx.Exec(ctx, `UPDATE leader_leases SET expires_at = expires_at WHERE name = 'maintenance'`); err != nil {
		t.Fatal(err)
	}
	if e.Once(ctx) || e.IsLeader() {
		t.Fatalf("the replica leads although another session holds the lease's row; log:\n%s", logs.String())
	}
	out := logs.String()
	if strings.Contains(out, "did not answer") {
		t.Errorf("a renewal blocked by a row another session holds is logged as a database that did not answer:\n%s", out)
	}
	if !strings.Contains(out, "another database session holds the lease's row (leader_leases)") || !strings.Contains(out, "pg_stat_activity") {
		t.Errorf("the warning does not say that another session holds the lease's row, nor how to find it:\n%s", out)
	}
	if err := tx.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	if !e.Once(ctx) {
		t.Fatalf("the replica does not lead once the session holding the row ended; log:\n%s", logs.String())
	}
	if err := e.StepDown(ctx); err != nil {
		t.Fatal(err)
	}
}
