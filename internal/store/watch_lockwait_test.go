package store_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/routerhq/router/internal/store"
)

// WatchJob waits for a job's row another transaction holds no longer than
// its bound: past it the job is not flagged, nothing is written, the error is
// ErrBusy naming the job, and the store reads on.
// Once the row is free, the job is flagged.
func TestWatchJobGivesUpOnAHeldRow(t *testing.T) {
	b := setupWatch(t)
	ctx := context.Background()
	j := b.create(t, "held")
	conn, err := pgx.Connect(ctx, b.db.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	tx, err := conn.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, `SELECT 1 FROM jobs WHERE id = $1 FOR UPDATE`, j.ID); err != nil {
		t.Fatal(err)
	}
	_, err = b.st.WatchJobWaiting(ctx, "acme", j.ID, 1) // the least bound there is (1 ms)
	var busy *store.BusyError
	if !errors.As(err, &busy) || !errors.Is(err, store.ErrBusy) || !strings.Contains(err.Error(), j.ID) {
		t.Fatalf("WatchJobWaiting of a held row: %v; want ErrBusy naming the job", err)
	}
	var watched bool
	if err := conn.QueryRow(ctx, `SELECT watched FROM jobs WHERE id = $1`, j.ID).Scan(&watched); err != nil || watched {
		t.Fatalf("a held job was flagged: %v, %v", watched, err)
	}
	if state, err := b.st.JobState(ctx, "acme", j.ID); err != nil || state != store.JobRunning {
		t.Fatalf("a plain read after the busy watch: %q, %v", state, err)
	}
	if err := tx.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	if state, err := b.st.WatchJob(ctx, "acme", j.ID); err != nil || state != store.JobRunning {
		t.Fatalf("WatchJob of the released row = %q, %v; want running", state, err)
	}
	if err := conn.QueryRow(ctx, `SELECT watched FROM jobs WHERE id = $1`, j.ID).Scan(&watched); err != nil || !watched {
		t.Fatalf("the released job was not flagged: %v, %v", watched, err)
	}
}
