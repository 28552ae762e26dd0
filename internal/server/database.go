package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/routerhq/router/internal/config"
	"github.com/routerhq/router/internal/localpg"
	"github.com/routerhq/router/internal/store"
)

// OpenDatabase connects to the configured database, or, with `database_url:
// embedded` (config.EmbeddedDatabase), starts the embedded local PostgreSQL in
// .local/pg under the working directory. close stops everything it started.
// No database at all is refused: a replica quietly on a private database of
// its own (a deployment that lost its DATABASE_URL) would keep its own jobs
// and idempotency keys, apart from the other replicas' — every retry routed
// to it a second job.
func OpenDatabase(ctx context.Context, cfg *config.Config, log *slog.Logger, tune ...func(*pgxpool.Config)) (pool *pgxpool.Pool, closeFn func(), err error) {
	url := cfg.DatabaseURL
	var cluster *localpg.Cluster
	switch url {
	case "":
		return nil, nil, errNoDatabase
	case config.EmbeddedDatabase:
		dir := filepath.Join(".local", "pg")
		log.Info("database_url: embedded: starting the embedded local PostgreSQL", "dir", dir)
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
	return pool, func() { pool.Close(); cluster.Stop() }, nil
}

// errNoDatabase says how to configure a database.
var errNoDatabase = errors.New("no database configured: set database_url in the configuration, or the DATABASE_URL environment variable, " +
	"to the PostgreSQL every replica shares (postgres://user:password@host:5432/db); for a development database on this machine " +
	"write `database_url: embedded` (a local PostgreSQL in .local/pg, started and stopped with the command, as `make run` does)")

// WithStore loads the config at cfgPath, opens its database and runs fn with a
// store on it, closing everything after.
func WithStore(ctx context.Context, cfgPath string, fn func(cfg *config.Config, st *store.Store) error) error {
	cfg, err := config.Load(cfgPath)
	if err != nil {
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
	return fn(cfg, store.New(pool, store.Options{KeyRetention: cfg.Idempotency.Retention.D(),
		RedeliveryWindow: cfg.Webhooks.RedeliveryWindow()}))
}
