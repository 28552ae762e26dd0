package main

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/routerhq/router/internal/store"
	"github.com/routerhq/router/internal/testdb"
)

// holdInTx runs sql in a transaction of another session, kept open until
// the test ends: it holds what sql locked. It returns the session's pid.
func holdInTx(t *testing.T, db *testdb.DB, sql string, args ...any) (pid int32) {
	t.Helper()
	ctx := context.Background()
	tx, err := db.Pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tx.Rollback(ctx) })
	if _, err := tx.Exec(ctx, sql, args...); err != nil {
		t.Fatal(err)
	}
	if err := tx.QueryRow(ctx, `SELECT pg_backend_pid()`).Scan(&pid); err != nil {
		t.Fatal(err)
	}
	return pid
}

// wantLockErr checks that err is the key commands' bounded lock wait naming
// what, not the test's deadline.
func wantLockErr(t *testing.T, ctx context.Context, err error, what string) {
	t.Helper()
	if ctx.Err() != nil {
		t.Fatalf("the command waited until the test's deadline: %v", err)
	}
	if !errors.Is(err, store.ErrBusy) || !strings.Contains(err.Error(), what) ||
		!strings.Contains(err.Error(), "nothing changed") || !strings.Contains(err.Error(), "pg_stat_activity") {
		t.Fatalf("error %v; want that another session holds %s, nothing changed, and where to find it (pg_stat_activity)", err, what)
	}
}

// `router keys revoke`, `keys create --webhook-url` and `keys
// rotate-webhook-secret` do not wait forever behind another session's lock
// on the key's row or on webhook_owners: past the store's bound they say who
// holds what, and nothing changed. Found by review.
func TestKeysCommandsDoNotWaitForeverBehindALock(t *testing.T) {
	db := testdb.New(t, store.Options{})
	cfg := writeConfig(t, db, "  - name: p\n    type: scripted")
	bg := context.Background()
	hooked, err := db.Store.CreateAPIKeyWith(bg, store.NewAPIKey{Owner: "acme", WebhookURL: "https://hooks.example.com/a"})
	if err != nil {
		t.Fatal(err)
	}
	id := strconv.FormatInt(hooked.ID, 10)
	ctx, cancel := context.WithTimeout(bg, 60*time.Second) // generous: the error must be the lock's, never this deadline
	defer cancel()

	t.Run("revoke behind the key's row", func(t *testing.T) {
		holdInTx(t, db, `SELECT 1 FROM api_keys WHERE id = $1 FOR UPDATE`, hooked.ID)
		var err error
		captureOutput(t, func() { err = runKeys(ctx, []string{"revoke", id, "--config", cfg}) })
		wantLockErr(t, ctx, err, "API key "+id)
	})
	if _, err := db.Store.OwnerForAPIKey(bg, hooked.Key); err != nil {
		t.Fatalf("the key was revoked after all: %v", err)
	}

	t.Run("behind webhook_owners", func(t *testing.T) {
		holdInTx(t, db, `UPDATE webhook_owners SET updated_at = now()`)
		for _, args := range [][]string{
			{"revoke", id},
			{"create", "--owner", "beta", "--webhook-url", "https://hooks.example.com/b"},
			{"rotate-webhook-secret", "--owner", "acme"},
		} {
			var err error
			stdout, _ := captureOutput(t, func() { err = runKeys(ctx, append(args, "--config", cfg)) })
			wantLockErr(t, ctx, err, "webhook_owners")
			if strings.Contains(stdout, "whsec_") || strings.Contains(stdout, "rk_") {
				t.Fatalf("%s printed a secret for a change that did not happen: %q", args[0], stdout)
			}
		}
	})
	keys, err := db.Store.ListAPIKeys(bg)
	if err != nil || len(keys) != 1 || keys[0].RevokedAt != nil || keys[0].WebhookPreviousUntil != nil {
		t.Fatalf("keys %+v (%v): want acme's key alone, unrevoked, not rotated", keys, err)
	}
	if w, err := db.Store.WebhookFor(bg, "acme"); err != nil || w.Secret != hooked.WebhookSecret {
		t.Fatalf("acme's webhook %+v (%v): want its secret unchanged", w, err)
	}
}

// A key command stopped by a signal while it waits says it stopped and that
// nothing changed.
func TestKeysRevokeStoppedWhileWaiting(t *testing.T) {
	db := testdb.New(t, store.Options{})
	cfg := writeConfig(t, db, "  - name: p\n    type: scripted")
	bg := context.Background()
	created, err := db.Store.CreateAPIKeyWith(bg, store.NewAPIKey{Owner: "acme"})
	if err != nil {
		t.Fatal(err)
	}
	holder := holdInTx(t, db, `SELECT 1 FROM api_keys WHERE id = $1 FOR UPDATE`, created.ID)
	ctx, cancel := context.WithCancel(bg)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- runKeys(ctx, []string{"revoke", strconv.FormatInt(created.ID, 10), "--config", cfg}) }()
	// The signal comes while the revocation waits for the row: a session
	// the holder blocks (store.KeyLockWait is long beside this loop).
	for waiting := false; !waiting; {
		if err := db.Pool.QueryRow(bg, `SELECT EXISTS (SELECT 1 FROM pg_stat_activity WHERE $1 = ANY(pg_blocking_pids(pid)))`, holder).Scan(&waiting); err != nil {
			t.Fatal(err)
		}
		select {
		case err := <-done:
			t.Fatalf("the revocation ended before it was stopped: %v", err)
		default:
		}
	}
	cancel()
	err = <-done
	if err == nil || err.Error() != "stopped; nothing changed" {
		t.Fatalf("error %v; want stopped; nothing changed", err)
	}
	if _, err := db.Store.OwnerForAPIKey(bg, created.Key); err != nil {
		t.Fatalf("the key was revoked after all: %v", err)
	}
}
