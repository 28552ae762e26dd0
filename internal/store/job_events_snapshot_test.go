package store_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/routerhq/router/internal/store"
)

// JobEvents (GET /v1/jobs/{id}/events) read the job, its events and their
// delivery tries in three statements, each seeing the database as of its own
// start: a try recorded between the events' read and the tries' read
// (RecordDelivery commits the try and the event's new status together) made
// the event read as pending with no tries beside its delivered try. Now the
// reads are one read-only REPEATABLE READ transaction, held between its
// statements as TestGetJobReadsOneSnapshot holds GetJob's: a writer holds
// webhook_deliveries and records the try while the read of the tries waits
// for it. With every pgx query exec mode. Found by review.
func TestJobEventsReadOneSnapshot(t *testing.T) {
	b := setup(t)
	ctx := context.Background()
	ids := events(t, b.st, b.db, len(execModes))
	for i, mode := range execModes {
		t.Run(mode, func(t *testing.T) {
			// One connection, whose statements the first read prepares: the
			// next read sends its statements without waiting for the lock.
			_, st := modeStore(t, b, mode, 1)
			eventID := ids[i]
			jobID := jobOf(t, b.db, eventID)
			if evs, err := st.JobEvents(ctx, "acme", jobID); err != nil || oneMoment(evs) != "" {
				t.Fatalf("JobEvents: %v %s", err, oneMoment(evs))
			}
			if _, err := st.JobEvents(ctx, "globex", jobID); !errors.Is(err, store.ErrNotFound) {
				t.Fatalf("JobEvents of another owner's job: %v, want ErrNotFound", err)
			}
			if _, err := st.JobEvents(ctx, "acme", "00000000-0000-4000-8000-000000000000"); !errors.Is(err, store.ErrNotFound) {
				t.Fatalf("JobEvents of no job: %v, want ErrNotFound", err)
			}
			tx, err := b.db.Pool.Begin(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer func() { _ = tx.Rollback(ctx) }()
			if _, err := tx.Exec(ctx, `LOCK TABLE webhook_deliveries IN ACCESS EXCLUSIVE MODE`); err != nil {
				t.Fatal(err)
			}
			type read struct {
				evs []*store.Event
				err error
			}
			got := make(chan read, 1)
			go func() {
				evs, err := st.JobEvents(ctx, "acme", jobID)
				got <- read{evs, err}
			}()
			waitForLockWait(t, b.db.Pool, "webhook_deliveries")
			if _, err := tx.Exec(ctx, `INSERT INTO webhook_deliveries (event_id, try, url, started_at, latency_ms, status_code)
				VALUES ($1, 1, 'https://acme.example/hook', now(), 3, 204)`, eventID); err != nil {
				t.Fatal(err)
			}
			if _, err := tx.Exec(ctx, `UPDATE job_events SET status = 'delivered', tries = 1, delivered_at = now() WHERE id = $1`, eventID); err != nil {
				t.Fatal(err)
			}
			if err := tx.Commit(ctx); err != nil {
				t.Fatal(err)
			}
			r := <-got
			if r.err != nil {
				t.Fatal(r.err)
			}
			if msg := oneMoment(r.evs); msg != "" {
				t.Fatal(msg)
			}
			evs, err := st.JobEvents(ctx, "acme", jobID)
			if err != nil || len(evs) != 1 || evs[0].Status != store.EventDelivered || len(evs[0].Deliveries) != 1 {
				t.Fatalf("JobEvents after the try: %v %s, want the event delivered with its try", err, oneMoment(evs))
			}
		})
	}
}

// oneMoment says what is wrong with evs, the one event of a job read while
// its try was recorded, when the event and its tries do not belong to one
// moment ("" when they do).
func oneMoment(evs []*store.Event) string {
	if len(evs) != 1 {
		return fmt.Sprintf("read %d events, want the job's one event", len(evs))
	}
	e := evs[0]
	if e.Tries == len(e.Deliveries) && (len(e.Deliveries) == 1) == (e.Status == store.EventDelivered) {
		return ""
	}
	return fmt.Sprintf("event read as %s with %d tries beside %d delivery tries: the event and its tries were read at different moments",
		e.Status, e.Tries, len(e.Deliveries))
}

// A JobEvents read that fails inside its transaction (here the read of the
// tries runs into lock_timeout while the table is held) leaves no
// transaction open on the pool's connection: the next read, on the pool's
// one connection, gets a connection outside any transaction and succeeds.
func TestJobEventsFailureLeavesNoTransactionOpen(t *testing.T) {
	b := setup(t)
	ctx := context.Background()
	ids := events(t, b.st, b.db, 1)
	jobID := jobOf(t, b.db, ids[0])
	for _, mode := range execModes {
		t.Run(mode, func(t *testing.T) {
			cfg, err := pgxpool.ParseConfig(fmt.Sprintf("%s&pool_max_conns=1&default_query_exec_mode=%s&lock_timeout=100", b.db.URL, mode))
			if err != nil {
				t.Fatal(err)
			}
			store.ConfigurePool(cfg)
			pool, err := pgxpool.NewWithConfig(ctx, cfg)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(pool.Close)
			st := store.New(pool, store.Options{})
			if evs, err := st.JobEvents(ctx, "acme", jobID); err != nil || len(evs) != 1 {
				t.Fatalf("JobEvents: %d events, %v", len(evs), err)
			}
			tx, err := b.db.Pool.Begin(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := tx.Exec(ctx, `LOCK TABLE webhook_deliveries IN ACCESS EXCLUSIVE MODE`); err != nil {
				t.Fatal(err)
			}
			_, readErr := st.JobEvents(ctx, "acme", jobID)
			if err := tx.Rollback(ctx); err != nil {
				t.Fatal(err)
			}
			if readErr == nil {
				t.Fatal("JobEvents read the tries of a table held past lock_timeout")
			}
			c, err := pool.Acquire(ctx)
			if err != nil {
				t.Fatal(err)
			}
			status := c.Conn().PgConn().TxStatus()
			c.Release()
			if status != 'I' {
				t.Fatalf("after the failed read (%v) the pool hands out a connection in transaction status %q, want 'I' (idle)", readErr, status)
			}
			if evs, err := st.JobEvents(ctx, "acme", jobID); err != nil || len(evs) != 1 {
				t.Fatalf("JobEvents after a failed read (%v): %d events, %v", readErr, len(evs), err)
			}
		})
	}
}
