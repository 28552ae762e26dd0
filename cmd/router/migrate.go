package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivermigrate"

	"github.com/routerhq/router/internal/config"
	"github.com/routerhq/router/internal/server"
	"github.com/routerhq/router/internal/store"
)

func runMigrate(ctx context.Context, args []string) error {
	fs := newFlags("migrate", "router migrate [--config router.yaml]",
		"Applies the embedded SQL migrations under an advisory lock; safe to run from several replicas at once. "+
			"Lists the migrations the database holds that this binary does not know (applied by a newer router).")
	cfgPath := configFlag(fs)
	if err := parseNoArgs(fs, args); err != nil {
		return err
	}
	cfg, err := config.Load(*cfgPath)
	if err != nil {
		return err
	}
	if err := server.CommandDatabase(cfg); err != nil {
		return err
	}
	log, err := server.Logger(cfg.Log)
	if err != nil {
		return err
	}
	pool, closeDB, err := server.OpenDatabase(ctx, cfg, log)
	if err != nil && ctx.Err() != nil {
		// Stopped while connecting: said as for a stop during Migrate.
		return fmt.Errorf("stopped by a signal (%w): no migration was applied; run `router migrate` again", err)
	}
	if err != nil {
		return err
	}
	defer closeDB()
	st := store.New(pool, store.Options{KeyRetention: cfg.Idempotency.Retention.D(),
		RedeliveryWindow: cfg.Webhooks.RedeliveryWindow(), Log: log})
	// What was applied is printed even when a later migration fails: each
	// migration commits on its own, so those stay applied, and the operator
	// fixing the failure needs to know where it stopped.
	applied, err := st.Migrate(ctx)
	for _, m := range applied {
		fmt.Println("applied", m)
	}
	if err != nil && ctx.Err() != nil {
		// Not "context canceled" alone: the operator needs to know what
		// holds and what to do.
		done := "no migration was applied"
		if len(applied) > 0 {
			done = "the migrations listed above are applied"
		}
		return fmt.Errorf("stopped by a signal (%v): %s, and nothing of the next one was (each migration is one transaction); "+
			"run `router migrate` again to apply the rest", err, done)
	}
	if err != nil {
		return err
	}
	newer, err := newerMigrations(ctx, pool)
	if err != nil {
		return err
	}
	printMigrateOutcome(os.Stdout, len(applied), newer)
	return nil
}

// printMigrateOutcome says, after the applied migrations are listed, that the
// database is up to date, or (whatever was applied) that it holds migrations
// newer than this binary: a database migrated by a newer router, this binary
// an older one (a rollback, or an older replica of a rolling update). It is
// not an error — migrations only add, and /readyz ignores the versions its
// binary does not know — but "up to date" would hide that this binary is
// older than its schema.
func printMigrateOutcome(w io.Writer, applied int, newer []string) {
	switch {
	case len(newer) > 0:
		fmt.Fprintf(w, "the database has %d migration(s) newer than this binary, applied by a newer router (was it rolled back?): %s; "+
			"they stay applied (migrations are never undone), and this binary's own are all applied\n",
			len(newer), strings.Join(newer, ", "))
	case applied == 0:
		fmt.Fprintln(w, "database is up to date")
	}
}

// newerMigrations lists the migrations the database holds that this binary
// does not know: the router's by file name, then River's (main line) by
// version.
func newerMigrations(ctx context.Context, pool *pgxpool.Pool) ([]string, error) {
	all, err := store.Migrations()
	if err != nil {
		return nil, err
	}
	known := make([]int, len(all))
	for i, m := range all {
		known[i] = m.Version
	}
	rows, err := pool.Query(ctx, `SELECT name FROM schema_migrations WHERE NOT version = ANY($1) ORDER BY version`, known)
	if err != nil {
		return nil, fmt.Errorf("read schema_migrations: %w", err)
	}
	newer, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, fmt.Errorf("read schema_migrations: %w", err)
	}
	m, err := rivermigrate.New(riverpgxv5.New(nil), nil)
	if err != nil {
		return nil, fmt.Errorf("river migrations: %w", err)
	}
	var riverKnown []int
	for _, v := range m.AllVersions() {
		riverKnown = append(riverKnown, v.Version)
	}
	// Migrate has just run River's migrations, so river_migration has its
	// line column (River's migration 5 added it).
	rows, err = pool.Query(ctx, `SELECT version FROM river_migration WHERE line = 'main' AND NOT version = ANY($1) ORDER BY version`, riverKnown)
	if err != nil {
		return nil, fmt.Errorf("read River's migrations: %w", err)
	}
	riverNewer, err := pgx.CollectRows(rows, pgx.RowTo[int])
	if err != nil {
		return nil, fmt.Errorf("read River's migrations: %w", err)
	}
	for _, v := range riverNewer {
		newer = append(newer, fmt.Sprintf("River's migration %d", v))
	}
	return newer, nil
}
