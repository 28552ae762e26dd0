package server

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/routerhq/router/internal/config"
	"github.com/routerhq/router/internal/localpg"
	"github.com/routerhq/router/internal/store"
)

// OpenDatabase connects to the configured database, or, with `database_url:
// embedded` (config.EmbeddedDatabase) or none at all (SPEC §11's default),
// starts the embedded local PostgreSQL in .local/pg under the working
// directory. close stops everything it started. The default is said loudly:
// a production replica quietly on a private database of its own (a
// deployment that lost its DATABASE_URL) keeps its own jobs and idempotency
// keys, apart from the other replicas'.
//
// close waits for the connections in use to be returned for up to
// dbCloseWait, then goes on without them (see closeDatabase).
func OpenDatabase(ctx context.Context, cfg *config.Config, log *slog.Logger, tune ...func(*pgxpool.Config)) (pool *pgxpool.Pool, closeFn func(), err error) {
	return openDatabase(ctx, cfg, log, nil, tune...)
}

// openDatabase is OpenDatabase whose close also stops waiting for the
// connections in use when now ends (Options.StopNow; nil: never).
func openDatabase(ctx context.Context, cfg *config.Config, log *slog.Logger, now context.Context, tune ...func(*pgxpool.Config)) (pool *pgxpool.Pool, closeFn func(), err error) {
	url := cfg.DatabaseURL
	var cluster *localpg.Cluster
	if embedded, explicit := embeddedDatabase(url); embedded {
		dir := embeddedDir
		if !explicit {
			log.Warn(noDatabaseWarning, "dir", dir)
		} else {
			// Not "starting": a CLI command beside `make run` uses the server
			// already running there (localpg says which, next).
			log.Info("database_url: embedded: using the embedded local PostgreSQL", "dir", dir)
		}
		cluster, err = localpg.Start(ctx, localpg.Options{DataDir: dir, Durable: true, Logger: log})
		if err != nil {
			return nil, nil, fmt.Errorf("start local PostgreSQL: %w", err)
		}
		url = cluster.URL
	}
	pool, err = store.Connect(ctx, url, tune...)
	if err != nil {
		cluster.Stop()
		return nil, nil, err
	}
	return pool, func() { closeDatabase(pool, cluster, log, now) }, nil
}

// dbCloseWait bounds how long closing the database waits for connections
// still in use to be returned.
var dbCloseWait = 5 * time.Second

// closeDatabase closes pool, then stops cluster (nil: none), saying so when
// this process started it (not when it used one another process runs, which
// goes on). A process that used another's server owns it once that process
// stopped it and this one started it again (localpg keeps an attached
// server: `make run` beside a CLI command that ends), and stops it then, so
// nothing is left running after the last process using it. pgxpool's Close
// waits until every connection in use is returned: one held by work that
// never ends (a query waiting on a row another session holds, with nothing
// left to cancel it) would keep the process from exiting, past any signal.
// It waits up to dbCloseWait, or until now ends (a second signal) while a
// connection is still in use or being opened, then goes on: the embedded
// server's fast shutdown ends those sessions, and an external server sees
// their connections close as the process exits. With none in use, Close
// only closes idle connections, which is quick: it is waited for (still
// within dbCloseWait) even after a second signal, so the pool is closed
// before the embedded server stops, and nothing is said to have been left.
func closeDatabase(pool *pgxpool.Pool, cluster *localpg.Cluster, log *slog.Logger, now context.Context) {
	if now == nil {
		now = context.Background()
	}
	closed := make(chan struct{})
	go func() { defer close(closed); pool.Close() }()
	timer := time.NewTimer(dbCloseWait)
	defer timer.Stop()
	select {
	case <-closed:
	case <-timer.C:
		log.Warn("database connections still in use after waiting for them: closing without them", "waited", dbCloseWait)
	case <-now.Done():
		if st := pool.Stat(); st.AcquiredConns() > 0 || st.ConstructingConns() > 0 {
			log.Warn("second signal: closing the database without waiting for the connections still in use",
				"in_use", st.AcquiredConns(), "opening", st.ConstructingConns())
			break
		}
		select {
		case <-closed:
		case <-timer.C: // one acquired just before Close began
			log.Warn("database connections still in use after waiting for them: closing without them", "waited", dbCloseWait)
		}
	}
	ran := cluster.Started() // Stop forgets the server it stops
	cluster.Stop()
	if ran {
		log.Info("PostgreSQL stopped", "dir", cluster.DataDir)
	}
}

// embeddedDatabase says whether database_url asks for the embedded local
// PostgreSQL, and whether it says so (`embedded`) rather than by default
// (empty, with no DATABASE_URL).
func embeddedDatabase(url string) (embedded, explicit bool) {
	return url == "" || url == config.EmbeddedDatabase, url == config.EmbeddedDatabase
}

// noDatabaseWarning is logged when no database is configured.
const noDatabaseWarning = "no database_url or DATABASE_URL: starting the embedded local PostgreSQL, a development database on this machine only; " +
	"in production set database_url (or DATABASE_URL) to the PostgreSQL every replica shares, or a replica keeps its jobs and idempotency keys apart from the others'; " +
	"write `database_url: embedded` to choose the embedded database explicitly and silence this warning"

// CommandDatabase refuses, for a one-shot command (migrate, keys, jobs,
// conformance run), a configuration that names no database. `serve` starts
// the embedded database then, with a warning (SPEC §11's default); a command
// would do the same and report success on a new database of its own — a key
// no replica accepts, "no job matches" while the router's database has them
// — when the shell it runs in lacks the deployment's DATABASE_URL.
func CommandDatabase(cfg *config.Config) error {
	if embedded, explicit := embeddedDatabase(cfg.DatabaseURL); embedded && !explicit {
		return fmt.Errorf("no database_url or DATABASE_URL: this command would run on a new development database of its own (.local/pg), not your router's; " +
			"set DATABASE_URL (or database_url in the configuration) to the database the router uses, or write `database_url: embedded` to use the embedded one, as `make run` does")
	}
	if _, explicit := embeddedDatabase(cfg.DatabaseURL); explicit {
		// The embedded database is .local/pg under the working directory: a
		// command run from another directory would initdb a new one there,
		// act on it and report success, while the router never sees it.
		dir, err := filepath.Abs(embeddedDir)
		if err != nil {
			return fmt.Errorf("database_url: embedded: find %s: %w", embeddedDir, err)
		}
		if !localpg.ClusterExists(dir) {
			return fmt.Errorf("database_url: embedded, but there is no embedded database in %s (the working directory's .local/pg): "+
				"this command would create a new one of its own, not your router's, and nothing was created; "+
				"run it from the directory `make run` runs in, start `make run` there first, or set DATABASE_URL to the router's database", dir)
		}
	}
	return nil
}

// embeddedDir is where the embedded database lives, under the working
// directory.
const embeddedDir = ".local/pg"

// WithStore loads the config at cfgPath, opens its database and runs fn with a
// store on it, closing everything after. It is for one-shot commands: a
// configuration without a database is refused (CommandDatabase).
func WithStore(ctx context.Context, cfgPath string, fn func(cfg *config.Config, st *store.Store) error) error {
	cfg, err := config.Load(cfgPath)
	if err != nil {
		return err
	}
	if err := CommandDatabase(cfg); err != nil {
		return err
	}
	log, err := Logger(cfg.Log)
	if err != nil {
		return err
	}
	pool, closeDB, err := OpenDatabase(ctx, cfg, log)
	if err != nil {
		return err
	}
	defer closeDB()
	st := store.New(pool, store.Options{KeyRetention: cfg.Idempotency.Retention.D(),
		RedeliveryWindow: cfg.Webhooks.RedeliveryWindow(), Log: log})
	defer st.Close() // before the pool
	return fn(cfg, st)
}
