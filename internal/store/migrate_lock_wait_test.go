package store_test

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/routerhq/router/internal/store"
)

// migrationLockID is store's key of the migration lock (migrate.go).
const migrationLockID = 7_245_003_711

// recordHandler hands every log record to a channel, so a test waits for a
// line instead of sleeping.
type recordHandler struct{ records chan slog.Record }

func (h recordHandler) Enabled(context.Context, slog.Level) bool { return true }
func (h recordHandler) Handle(_ context.Context, r slog.Record) error {
	h.records <- r.Clone()
	return nil
}
func (h recordHandler) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h recordHandler) WithGroup(string) slog.Handler      { return h }

func recordAttrs(r slog.Record) map[string]slog.Value {
	m := map[string]slog.Value{}
	r.Attrs(func(a slog.Attr) bool { m[a.Key] = a.Value; return true })
	return m
}

// A migration waiting for another process's migration lock (a replica
// migrating, or one stuck behind an operator's table lock) says so, naming the
// holder's pid, and says again when it has the lock: it waited in silence,
// and a router starting up looked hung.
func TestMigrateLogsWhileWaitingForTheMigrationLock(t *testing.T) {
	b := setup(t)
	ctx := context.Background()
	holder, err := b.db.Pool.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Release()
	if _, err := holder.Exec(ctx, "SELECT pg_advisory_lock($1)", migrationLockID); err != nil {
		t.Fatal(err)
	}
	held := true
	defer func() {
		if held {
			holder.Exec(context.Background(), "SELECT pg_advisory_unlock($1)", migrationLockID) //nolint:errcheck
		}
	}()
	holderPID := int64(holder.Conn().PgConn().PID())

	// A store of its own, so that only this Migrate's lines reach the handler
	// (setup's migrated with another logger).
	logs := recordHandler{records: make(chan slog.Record, 16)}
	st := store.New(b.db.Pool, store.Options{Log: slog.New(logs)})
	guard, cancel := context.WithTimeout(ctx, 30*time.Second) // a hang guard, not a timing assertion
	defer cancel()
	done := make(chan error, 1)
	go func() {
		_, err := st.Migrate(guard)
		done <- err
	}()

	select {
	case r := <-logs.records:
		if r.Level != slog.LevelInfo || r.Message != "waiting for another process's migration lock on the database" {
			t.Fatalf("first line while the lock is held: %s %q, want the info line saying it waits", r.Level, r.Message)
		}
		if pid := recordAttrs(r)["holder_pid"]; pid.Kind() != slog.KindInt64 || pid.Int64() != holderPID {
			t.Errorf("holder_pid %v, want %d (the session holding the lock)", pid, holderPID)
		}
	case err := <-done:
		t.Fatalf("Migrate returned (%v) without saying it waited for the lock another session holds", err)
	}

	if _, err := holder.Exec(ctx, "SELECT pg_advisory_unlock($1)", migrationLockID); err != nil {
		t.Fatal(err)
	}
	held = false
	if err := <-done; err != nil {
		t.Fatalf("Migrate once the lock is free: %v", err)
	}
	select {
	case r := <-logs.records:
		if r.Message != "migration lock obtained" {
			t.Errorf("line after the wait: %q, want %q", r.Message, "migration lock obtained")
		}
	default:
		t.Error("Migrate finished without saying it obtained the lock")
	}
	current, err := st.MigrationsCurrent(ctx)
	if err != nil || !current {
		t.Fatalf("migrations current %v (%v) after the wait, want true", current, err)
	}
}
