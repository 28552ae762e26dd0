package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgerrcode"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/routerhq/router/internal/config"
	"github.com/routerhq/router/internal/server"
	"github.com/routerhq/router/internal/store"
)

// prepareSchema readies the database for a command that writes the router's
// tables (keys create, conformance run), as `router serve` does at start: with
// auto_migrate on (the default) it applies pending migrations; with it off it
// changes nothing and refuses a database that lacks some, saying to run
// `router migrate`. An operator who turns auto_migrate off migrates
// separately: in a rolling upgrade, a newer binary's command must not apply
// its migrations under the replicas still running the older one.
func prepareSchema(ctx context.Context, cfg *config.Config, st *store.Store, cfgPath string) error {
	if *cfg.AutoMigrate {
		if _, err := st.Migrate(ctx); err != nil {
			return fmt.Errorf("migrate the database (auto_migrate is on): %w", err)
		}
		return nil
	}
	current, err := st.MigrationsCurrent(ctx)
	if err != nil {
		return migrationHint(err, cfgPath)
	}
	if !current {
		return fmt.Errorf("the database lacks migrations this router needs, and auto_migrate is false in %s: "+
			"run `router migrate --config %s` first", cfgPath, cfgPath)
	}
	return nil
}

// withStore is server.WithStore for a command that uses the router's tables
// without migrating them first: when the database lacks them, the error says
// to migrate (see migrationHint).
func withStore(ctx context.Context, cfgPath string, fn func(cfg *config.Config, st *store.Store) error) error {
	return migrationHint(server.WithStore(ctx, cfgPath, fn), cfgPath)
}

// migrationHint adds what to do to err when it says a table, column or
// function of the router's schema is missing: the database was never migrated
// (a new database, auto_migrate off) or was migrated by an older router.
// PostgreSQL's own message ("relation "api_keys" does not exist") names the
// symptom, not the cure.
// An error that already carries the hint (prepareSchema's, inside
// withStore) is returned as it is: the hint is said once.
func migrationHint(err error, cfgPath string) error {
	var pgErr *pgconn.PgError
	var hinted *hintedError
	if !errors.As(err, &pgErr) || errors.As(err, &hinted) {
		return err
	}
	switch pgErr.Code {
	case pgerrcode.UndefinedTable, pgerrcode.UndefinedColumn, pgerrcode.UndefinedFunction:
		return &hintedError{fmt.Errorf("%w\nThe database lacks the router's tables, or has an older version of them: "+
			"run `router migrate --config %s` first (`router serve` does it at start unless auto_migrate is false)", err, cfgPath)}
	}
	return err
}

// hintedError is an error migrationHint has added its hint to.
type hintedError struct{ err error }

func (e *hintedError) Error() string { return e.err.Error() }
func (e *hintedError) Unwrap() error { return e.err }
