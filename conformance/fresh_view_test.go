package conformance_test

import (
	"context"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/routerhq/router/conformance"
	"github.com/routerhq/router/internal/ops"
	"github.com/routerhq/router/internal/store"
)

// The operator view (/v1/providers, /dashboard) shows a conformance result as
// a fresh pass exactly when the gate admits it, whatever the router's clock
// says: both judge freshness on the database's clock, with the same maximum
// age, including a maximum age of zero or less (the gate then admits nothing).
// The database clock is skewed here (a now() of the test's schema, ahead of
// pg_catalog's on the search path) to tell the two clocks apart.
func TestOperatorViewAgreesWithGate(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	for _, q := range []string{
		`CREATE TABLE clock_skew (skew interval NOT NULL)`,
		`INSERT INTO clock_skew VALUES ('0')`,
		`CREATE FUNCTION ` + e.db.Schema + `.now() RETURNS timestamptz LANGUAGE sql STABLE
			AS $$ SELECT pg_catalog.now() + (SELECT skew FROM ` + e.db.Schema + `.clock_skew) $$`,
	} {
		if _, err := e.db.Pool.Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	st, pool := skewedStore(t, e.db.URL, e.db.Schema)
	skew := func(d time.Duration) {
		t.Helper()
		if _, err := e.db.Pool.Exec(ctx, `UPDATE clock_skew SET skew = $1::bigint * interval '1 microsecond'`, d.Microseconds()); err != nil {
			t.Fatal(err)
		}
		var dbNow time.Time
		if err := pool.QueryRow(ctx, `SELECT now()`).Scan(&dbNow); err != nil {
			t.Fatal(err)
		}
		if off := dbNow.Sub(time.Now()) - d; off < -time.Minute || off > time.Minute {
			t.Fatalf("the database clock is %v off the skew asked for", off)
		}
	}
	triage, err := e.prompts.Get("triage", "")
	if err != nil {
		t.Fatal(err)
	}
	record := func(provider string, passed bool) {
		t.Helper()
		r := store.NewConformanceRun{Provider: provider, Model: provider, Prompt: triage.Name, PromptVersion: triage.Version,
			Passed: passed, CasesTotal: 2, CasesPassed: 2, RouterVersion: "test",
			PromptDigest: triage.Digest, TargetDigest: testTargetDigests(provider, provider, true)}
		if !passed {
			r.CasesPassed = 1
		}
		if _, err := st.RecordConformanceRun(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	// check compares, for every provider, the view's cell with the gate's
	// decision on a failover, and wants the gate's decision to be admit.
	check := func(step string, maxAge time.Duration, admit map[string]bool) {
		t.Helper()
		gate := conformance.NewGate(st, conformance.GateFallbacks, maxAge, conformance.CacheFor(0))
		cells, err := ops.StoreConformance{Store: st, MaxAge: maxAge}.ConformanceMatrix(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(cells) != len(admit) {
			t.Fatalf("%s: %d cells, want %d", step, len(cells), len(admit))
		}
		for _, c := range cells {
			ok, why := gate.Allow(ctx, c.Provider, triage, store.RoleFailover)
			if ok != admit[c.Provider] {
				t.Fatalf("%s: the gate says %v for %s (%s), the test expects %v", step, ok, c.Provider, why, admit[c.Provider])
			}
			if shown := c.Passed && c.Fresh; shown != ok {
				t.Errorf("%s, max_age %v: the view shows %s passed=%v fresh=%v, but the gate admits=%v (%s)",
					step, maxAge, c.Provider, c.Passed, c.Fresh, ok, why)
			}
		}
	}

	// The database clock two hours behind the router's: a pass recorded now
	// is fresh on it.
	skew(-2 * time.Hour)
	record("behind", true)
	check("database clock behind", time.Hour, map[string]bool{"behind": true})

	// The database clock two hours ahead: a pass recorded an hour ago by the
	// router's clock is three hours old on the database's.
	skew(-time.Hour)
	record("ahead", true)
	skew(2 * time.Hour)
	check("database clock ahead", time.Hour, map[string]bool{"behind": false, "ahead": false})
	check("database clock ahead, longer max_age", 5*time.Hour, map[string]bool{"behind": true, "ahead": true})

	// A max_age of zero or less: the gate admits no pass, and the view shows none fresh.
	skew(0)
	record("now", true)
	for _, maxAge := range []time.Duration{0, -time.Hour} {
		check("max_age not positive", maxAge, map[string]bool{"behind": false, "ahead": false, "now": false})
	}

	// A failing run after a fresh pass: the latest run decides, in both.
	record("now", false)
	check("latest run failed", 5*time.Hour, map[string]bool{"behind": true, "ahead": true, "now": false})
}

// skewedStore is a store on the test's schema whose search path puts the
// schema before pg_catalog, so its SQL's now() is the schema's.
func skewedStore(t *testing.T, dbURL, schema string) (*store.Store, *pgxpool.Pool) {
	t.Helper()
	u, err := url.Parse(dbURL)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Set("search_path", strings.Join([]string{schema, "pg_catalog"}, ","))
	u.RawQuery = q.Encode()
	cfg, err := pgxpool.ParseConfig(u.String())
	if err != nil {
		t.Fatal(err)
	}
	store.ConfigurePool(cfg)
	pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	return store.New(pool, store.Options{}), pool
}
