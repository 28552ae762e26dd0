package server

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/routerhq/router/internal/config"
	"github.com/routerhq/router/internal/localpg"
	"github.com/routerhq/router/internal/store"
)

// OpenDatabase connects to the configured database, or, when none is configured,
// starts the embedded local PostgreSQL in .local/pg under the working directory.
// close stops everything it started.
func OpenDatabase(ctx context.Context, cfg *config.Config, log *slog.Logger, tune ...func(*pgxpool.Config)) (pool *pgxpool.Pool, closeFn func(), err error) {
	url := cfg.DatabaseURL
	var cluster *localpg.Cluster
	if url == "" {
		dir := filepath.Join(".local", "pg")
		log.Info("no database_url or DATABASE_URL: starting the embedded local PostgreSQL", "dir", dir)
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
