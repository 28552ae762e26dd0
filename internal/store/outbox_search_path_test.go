package store_test

import (
	"context"
	"crypto/rand"
	"errors"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgerrcode"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/routerhq/router/internal/store"
	"github.com/routerhq/router/internal/testdb"
)

// The outbox trigger runs in whatever session changes a job: an operator's
// psql too (migration 0013: "a job written by hand"). Its function pins the
// router's schema as its search_path (migration 0029), so the caller's
// search_path neither breaks the transition nor sends the event's River job,
// or River's wake, to another schema.
func TestOutboxTriggerIgnoresCallersSearchPath(t *testing.T) {
	b := setup(t)
	ctx := context.Background()
	acmeHasWebhook(t, b)
	schema := b.db.Schema
	t.Run("qualified update from a default session", func(t *testing.T) {
		j, _, err := b.st.CreateJob(ctx, newJob(t, "nohook", "triage", "sp1", `{"k":"sp1"}`))
		if err != nil {
			t.Fatal(err)
		}
		if err := updateAs(ctx, b.db.Pool, "public", `UPDATE `+schema+`.jobs SET state = 'cancelled', version = version + 1 WHERE id = $1`, j.ID); err != nil {
			t.Errorf("an operator's schema-qualified cancellation of a job (owner without a webhook) failed inside the outbox trigger: %v", err)
		}
		// And the key's release trigger (idempotency_key_released): a
		// qualified takeover of the key by another job.
		other, _, err := b.st.CreateJob(ctx, newJob(t, "nohook", "triage", "sp1-other", `{"k":"sp1-other"}`))
		if err != nil {
			t.Fatal(err)
		}
		if err := updateAs(ctx, b.db.Pool, "public", `UPDATE `+schema+`.idempotency_keys SET job_id = $1 WHERE job_id = $2`, other.ID, j.ID); err != nil {
			t.Errorf("a schema-qualified update of an idempotency key from a default session failed inside its trigger: %v", err)
		}
		if n := count(t, b, `SELECT count(*) FROM released_keys WHERE job_id = $1`, j.ID); n != 1 {
			t.Errorf("released_keys has %d row(s) for the job whose key was taken over, want 1", n)
		}
	})
	t.Run("river job and wake stay in the router's schema", func(t *testing.T) {
		other := schema + "_other"
		if _, err := b.db.Pool.Exec(ctx, `CREATE SCHEMA `+other+`; CREATE TABLE `+other+`.river_job (LIKE `+schema+`.river_job INCLUDING DEFAULTS)`); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _, _ = b.db.Pool.Exec(context.Background(), `DROP SCHEMA `+other+` CASCADE`) })
		j, _, err := b.st.CreateJob(ctx, newJob(t, "acme", "triage", "sp2", `{"k":"sp2"}`))
		if err != nil {
			t.Fatal(err)
		}
		wakes := listen(t, b.db.Pool, schema+".river_insert", other+".river_insert")
		if err := updateAs(ctx, b.db.Pool, other+", "+schema, `UPDATE jobs SET state = 'cancelled', version = version + 1 WHERE id = $1`, j.ID); err != nil {
			t.Fatal(err)
		}
		events := count(t, b, `SELECT count(*) FROM job_events WHERE job_id = $1 AND status = 'pending'`, j.ID)
		delivering := count(t, b, `SELECT count(*) FROM job_events e JOIN river_job r ON r.args->>'event_id' = e.id::text WHERE e.job_id = $1`, j.ID)
		stray := count(t, b, `SELECT count(*) FROM `+other+`.river_job`)
		if events != 1 || delivering != 1 || stray != 0 {
			t.Errorf("job.cancelled: %d pending event(s), %d with a River job in the router's schema, %d River job(s) written to %s: "+
				"the event stays pending with nothing to deliver or abandon it", events, delivering, stray, other)
		}
		if got, want := wakes(t), []string{schema + ".river_insert"}; !slices.Equal(got, want) {
			t.Errorf("River's wakes went to %q, want %q (the channel River listens on in the router's schema)", got, want)
		}
	})
}

// The router in the public schema, with the default search_path ("$user",
// public): migration 0029 pins public, and a session whose search_path is
// another schema with a river_job of its own still writes the event's River
// job to public and wakes River on public.river_insert.
func TestOutboxTriggerPinsPublicSchema(t *testing.T) {
	ctx := context.Background()
	pool := publicDatabase(t)
	st := store.New(pool, store.Options{KeyRetention: time.Hour})
	if _, err := st.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	b := &bundle{db: &testdb.DB{Pool: pool, Store: st, Schema: "public"}, st: st}
	var current string
	if err := pool.QueryRow(ctx, `SELECT current_schema()`).Scan(&current); err != nil || current != "public" {
		t.Fatalf("the router's schema is %q (%v), want public", current, err)
	}
	for _, f := range []string{"job_event_outbox", "idempotency_key_released"} {
		var cfg []string
		if err := pool.QueryRow(ctx, `SELECT coalesce(proconfig, '{}') FROM pg_proc WHERE proname = $1 AND pronamespace = 'public'::regnamespace`, f).Scan(&cfg); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if !slices.Contains(cfg, "search_path=public, pg_temp") {
			t.Errorf("public.%s has settings %q, want search_path=public, pg_temp", f, cfg)
		}
	}
	acmeHasWebhook(t, b)
	if _, err := pool.Exec(ctx, `CREATE SCHEMA other; CREATE TABLE other.river_job (LIKE public.river_job INCLUDING DEFAULTS)`); err != nil {
		t.Fatal(err)
	}
	j, _, err := st.CreateJob(ctx, newJob(t, "acme", "triage", "pub", `{"k":"pub"}`))
	if err != nil {
		t.Fatal(err)
	}
	wakes := listen(t, pool, "public.river_insert", "other.river_insert")
	if err := updateAs(ctx, pool, "other", `UPDATE public.jobs SET state = 'cancelled', version = version + 1 WHERE id = $1`, j.ID); err != nil {
		t.Fatalf("a qualified cancellation from a session whose search_path is another schema: %v", err)
	}
	delivering := count(t, b, `SELECT count(*) FROM public.job_events e JOIN public.river_job r ON r.args->>'event_id' = e.id::text WHERE e.job_id = $1`, j.ID)
	stray := count(t, b, `SELECT count(*) FROM other.river_job`)
	if delivering != 1 || stray != 0 {
		t.Errorf("%d event(s) with a River job in public, %d River job(s) in other; want 1 and 0", delivering, stray)
	}
	if got, want := wakes(t), []string{"public.river_insert"}; !slices.Equal(got, want) {
		t.Errorf("River's wakes went to %q, want %q", got, want)
	}
}

// updateAs runs one statement in a transaction whose search_path is path,
// as an operator's session would.
func updateAs(ctx context.Context, pool *pgxpool.Pool, path, sql string, args ...any) error {
	return pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT set_config('search_path', $1, true)`, path); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, sql, args...)
		return err
	})
}

// listen listens to channels on a connection of its own and returns what
// collects the channels notified since: it sends a marker notification of
// its own and reads up to it (PostgreSQL delivers notifications in commit
// order), so no wait decides that nothing else came.
func listen(t *testing.T, pool *pgxpool.Pool, channels ...string) func(t *testing.T) []string {
	t.Helper()
	ctx := context.Background()
	c, err := pool.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	conn := c.Hijack()
	t.Cleanup(func() { _ = conn.Close(context.Background()) })
	marker := "marker_" + strings.ToLower(rand.Text()[:10])
	for _, ch := range append(channels, marker) {
		if _, err := conn.Exec(ctx, "LISTEN "+pgx.Identifier{ch}.Sanitize()); err != nil {
			t.Fatal(err)
		}
	}
	return func(t *testing.T) []string {
		t.Helper()
		if _, err := pool.Exec(ctx, `SELECT pg_notify($1, '')`, marker); err != nil {
			t.Fatal(err)
		}
		var got []string
		for {
			n, err := conn.WaitForNotification(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if n.Channel == marker {
				return got
			}
			got = append(got, n.Channel)
		}
	}
}

// publicDatabase creates a database of its own for the test, dropped when it
// ends, and returns a pool on it with the default search_path: the router's
// schema there is public.
func publicDatabase(t *testing.T) *pgxpool.Pool {
	t.Helper()
	ctx := context.Background()
	admin := testdb.New(t, store.Options{})
	name := "router_public_" + strings.ToLower(rand.Text()[:10])
	if _, err := admin.Pool.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		var pgErr *pgconn.PgError
		if errors.As(err, &pgErr) && pgErr.Code == pgerrcode.InsufficientPrivilege {
			t.Skipf("the test database's role may not create a database (%v): grant it CREATEDB to run this test", err)
		}
		t.Fatal(err)
	}
	u, err := url.Parse(admin.URL)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Del("search_path")
	u.RawQuery, u.Path = q.Encode(), "/"+name
	cfg, err := pgxpool.ParseConfig(u.String())
	if err != nil {
		t.Fatal(err)
	}
	store.ConfigurePool(cfg)
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		pool.Close()
		_, _ = admin.Pool.Exec(context.Background(), "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)")
	})
	return pool
}
