package store_test

import (
	"context"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/routerhq/router/internal/store"
)

// createFunctionRE finds the functions a migration creates or replaces.
var createFunctionRE = regexp.MustCompile(`(?i)\bCREATE\s+(?:OR\s+REPLACE\s+)?FUNCTION\s+([a-z_][a-z0-9_]*)\s*\(`)

// Every function of the router's own in its schema runs with the router's
// schema as its search_path (migration 0029), whoever calls it. A migration
// that replaces one (CREATE OR REPLACE FUNCTION drops its settings) must
// give it SET search_path = <schema>, pg_temp again, or this fails. A
// function with an SQL-standard body (RETURN …, BEGIN ATOMIC) is exempt:
// its body was resolved when it was created, so no search_path applies to
// it. River's functions (river_*) are River's. builtinsOnly are exempt too.
func TestRouterFunctionsPinTheirSearchPath(t *testing.T) {
	b := setup(t)
	ctx := context.Background()
	ms, err := store.Migrations()
	if err != nil {
		t.Fatal(err)
	}
	created := map[string]string{} // function -> the migration that last created or replaced it
	for _, m := range ms {
		for _, sub := range createFunctionRE.FindAllStringSubmatch(m.SQL, -1) {
			created[strings.ToLower(sub[1])] = m.Name
		}
	}
	rows, err := b.db.Pool.Query(ctx, `SELECT p.proname, p.prosqlbody IS NOT NULL, coalesce(p.proconfig, '{}')
		FROM pg_proc p WHERE p.pronamespace = current_schema()::regnamespace AND p.proname NOT LIKE 'river\_%'`)
	if err != nil {
		t.Fatal(err)
	}
	type fn struct {
		name     string
		standard bool
		config   []string
	}
	fns, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (fn, error) {
		var f fn
		return f, r.Scan(&f.name, &f.standard, &f.config)
	})
	if err != nil {
		t.Fatal(err)
	}
	want := "search_path=" + b.db.Schema + ", pg_temp"
	found := map[string]bool{}
	for _, f := range fns {
		found[f.name] = true
		if f.standard || slices.Contains(f.config, want) || builtinsOnly[f.name] != "" {
			continue
		}
		from := created[f.name]
		if from == "" {
			from = "no migration (made by hand?)"
		}
		t.Errorf("function %s.%s (last created by %s) runs with its caller's search_path (settings %q): "+
			"the names its body leaves unqualified (tables, functions) then resolve in whatever schema the caller has first. "+
			"Give it `SET search_path = <the router's schema>, pg_temp` in the migration that creates or replaces it "+
			"(CREATE OR REPLACE FUNCTION drops the setting; see migration 0029)", b.db.Schema, f.name, from, f.config)
	}
	for name, m := range created {
		if !found[name] && !droppedLater(ms, name) {
			t.Errorf("migration %s creates function %s, which is not in the router's schema %s", m, name, b.db.Schema)
		}
	}
	for _, must := range []string{"job_event_outbox", "idempotency_key_released"} {
		if !found[must] {
			t.Errorf("the trigger function %s is missing from the router's schema: this test checks nothing", must)
		}
	}
}

// builtinsOnly are the router's functions whose bodies name only built-in
// functions and no table: pg_catalog, which provides them, is searched first
// whatever the search_path, and a SET clause would cost a settings save and
// restore on every call (router_uuid_v7 is the default of job_events.id,
// called for each event a win writes). Each with why it needs no pin.
var builtinsOnly = map[string]string{
	"router_uuid_v7": "gen_random_uuid, uuid_send, int8send, clock_timestamp, overlay, set_bit, encode: all pg_catalog's",
}

// droppedLater reports whether a migration drops function name.
func droppedLater(ms []store.Migration, name string) bool {
	re := regexp.MustCompile(`(?i)\bDROP\s+FUNCTION\s+(?:IF\s+EXISTS\s+)?` + regexp.QuoteMeta(name) + `\b`)
	for _, m := range ms {
		if re.MatchString(m.SQL) {
			return true
		}
	}
	return false
}
