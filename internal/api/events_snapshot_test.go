package api_test

import (
	"context"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
)

// GET /v1/jobs/{id}/events read the job, its events and their delivery tries
// in three statements, each seeing the database as of its own start: a try
// recorded between them (RecordDelivery commits the try and the event's new
// status together) showed the event pending with no tries beside its
// delivered try. docs/api.md: a try is "listed in deliveries (and counted in
// tries)". The read is held between its statements deterministically: a
// writer holds webhook_deliveries (LOCK TABLE), so the read of the tries
// waits after the event was read; the writer records a delivered try while it
// waits. Found by review (rapi finding 2).
func TestJobEventsReadOneSnapshot(t *testing.T) {
	b := setup(t, options{retention: time.Hour})
	ctx := context.Background()
	if err := b.db.Store.SyncConfigWebhooks(ctx, map[string]string{"acme": "http://127.0.0.1:9/hook"}); err != nil {
		t.Fatal(err)
	}
	r := b.create(t, acmeKey, "ev-snap-1", triageBody("Events"), "Prefer", "wait=10")
	if r.body["state"] != "succeeded" {
		t.Fatalf("create: %d %s", r.status, r.raw)
	}
	id := r.job()
	var eventID string
	if err := b.db.Pool.QueryRow(ctx, `SELECT id::text FROM job_events WHERE job_id = $1`, id).Scan(&eventID); err != nil {
		t.Fatal(err)
	}
	// Prepare the read's statements on every connection of the pool: a
	// statement prepared while the table is locked would wait for the lock
	// before the read's first statement ran.
	var wg sync.WaitGroup
	for range 64 {
		wg.Go(func() {
			if g, err := send(b.srv.URL+"/v1/jobs/"+id+"/events", "GET", acmeKey, ""); err != nil || g.status != http.StatusOK {
				t.Errorf("events: %v %d %s", err, g.status, g.raw)
			}
		})
	}
	wg.Wait()
	tx, err := b.db.Pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback(ctx) }()
	if _, err := tx.Exec(ctx, `LOCK TABLE webhook_deliveries IN ACCESS EXCLUSIVE MODE`); err != nil {
		t.Fatal(err)
	}
	got := make(chan reply, 1)
	go func() {
		g, err := send(b.srv.URL+"/v1/jobs/"+id+"/events", "GET", acmeKey, "")
		if err != nil {
			t.Error(err)
		}
		got <- g
	}()
	waitForTableLockWait(t, b.db.Pool, "webhook_deliveries")
	if _, err := tx.Exec(ctx, `INSERT INTO webhook_deliveries (event_id, try, url, started_at, latency_ms, status_code)
		VALUES ($1, 1, 'http://127.0.0.1:9/hook', now(), 3, 204)`, eventID); err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, `UPDATE job_events SET status = 'delivered', tries = 1, delivered_at = now() WHERE id = $1`, eventID); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	g := <-got
	data, _ := g.body["data"].([]any)
	if g.status != http.StatusOK || len(data) != 1 {
		t.Fatalf("events: %d %s", g.status, g.raw)
	}
	ev := data[0].(map[string]any)
	deliveries, _ := ev["deliveries"].([]any)
	tries, _ := ev["tries"].(float64)
	if int(tries) != len(deliveries) || (len(deliveries) == 1) != (ev["status"] == "delivered") {
		t.Fatalf("event read as status %v, tries %v, beside %d delivery tries %v: the event and its tries were read at different moments",
			ev["status"], ev["tries"], len(deliveries), deliveries)
	}
	// The read after the commit sees the try.
	if g := b.do(t, "GET", "/v1/jobs/"+id+"/events", acmeKey, ""); !containsAll(string(g.raw), `"status":"delivered"`, `"tries":1`, `"status_code":204`) {
		t.Fatalf("events after the try: %d %s", g.status, g.raw)
	}
}

// waitForTableLockWait returns once a session waits for a lock on table.
func waitForTableLockWait(t *testing.T, pool *pgxpool.Pool, table string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for {
		var waiting bool
		err := pool.QueryRow(ctx, `SELECT EXISTS (SELECT FROM pg_locks WHERE relation = $1::regclass AND NOT granted)`, table).Scan(&waiting)
		if err != nil {
			t.Fatalf("no read waited for the lock on %s: %v", table, err)
		}
		if waiting {
			return
		}
		time.Sleep(time.Millisecond) // polling pg_locks: the server signals no lock wait
	}
}
