package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/google/uuid"

	"github.com/routerhq/router/internal/api"
	"github.com/routerhq/router/internal/config"
	"github.com/routerhq/router/internal/prompt"
	"github.com/routerhq/router/internal/race"
	"github.com/routerhq/router/internal/store"
)

func runServe(ctx context.Context, args []string) error {
	fs := newFlags("serve", "router serve [--config router.yaml]",
		"Runs the router's HTTP API. Without database_url or DATABASE_URL it starts the embedded local PostgreSQL.")
	cfgPath := configFlag(fs)
	if err := parse(fs, args); err != nil || fs.Parsed() && fs.NArg() > 0 {
		return errUsage
	}
	cfg, err := config.Load(*cfgPath)
	if err != nil {
		return err
	}
	log := newLogger(cfg.Log)
	prompts, err := prompt.LoadDir(resolve(cfg, cfg.PromptsDir))
	if err != nil {
		return err
	}
	targets, err := buildTargets(cfg)
	if err != nil {
		return err
	}
	for name, r := range cfg.Routes {
		if r.ConformancePrompt == "" {
			continue
		}
		if _, err := prompts.Get(r.ConformancePrompt, ""); err != nil {
			return fmt.Errorf("routes.%s.conformance_prompt: %w", name, err)
		}
	}
	pool, closeDB, err := openDatabase(ctx, cfg, log)
	if err != nil {
		return err
	}
	defer closeDB()
	st := store.New(pool, store.Options{KeyRetention: cfg.Idempotency.Retention.D()})
	if *cfg.AutoMigrate {
		applied, err := st.Migrate(ctx)
		if err != nil {
			return err
		}
		if len(applied) > 0 {
			log.Info("migrations applied", "migrations", applied)
		}
	}
	listener := store.NewListener(pool, log)
	lctx, stopListener := context.WithCancel(context.WithoutCancel(ctx))
	defer stopListener()
	go listener.Run(lctx)

	replica := replicaID()
	ops := startOps(ctx, cfg, st, pool, replica, log)
	defer ops.stop()
	runner := race.New(race.Config{
		Store: st, Listener: listener, Prompts: prompts, Targets: targets, Routes: buildRoutes(cfg),
		LeaseOwner: replica, Lease: cfg.Execution.Lease.D(), ReconcileAfter: cfg.Execution.ReconcileAfter.D(), Log: log,
		Gate: ops.gate, Admission: ops.breakers, Observer: ops.metrics,
	})
	routeNames, models := map[string]bool{}, map[string]string{}
	for name, r := range cfg.Routes {
		routeNames[name] = true
		for _, m := range r.Models {
			models[m] = name
		}
	}
	apiKeys, err := staticKeys(cfg)
	if err != nil {
		return err
	}
	rctx, stopRecovery := context.WithCancel(context.WithoutCancel(ctx))
	defer stopRecovery()
	go runner.RunRecovery(rctx, race.RecoveryConfig{})
	srv := api.New(api.Config{
		MaxBodyBytes: cfg.HTTP.MaxBodyBytes, DefaultWait: cfg.HTTP.DefaultWait.D(), MaxWait: cfg.HTTP.MaxWait.D(),
		LeaseOwner: replica, Lease: cfg.Execution.Lease.D(),
		RequireChatKey: cfg.Chat.RequireIdempotencyKey, ChatWait: cfg.Chat.Wait.D(),
	}, api.Deps{
		Store: st, Listener: listener, Prompts: prompts, Routes: routeNames, Models: models, Exec: runner,
		Auth: &api.KeyAuth{Static: apiKeys, Store: st}, Log: log, Counters: ops.metrics,
	})
	ops.mount(srv, cfg, st)
	ln, err := net.Listen("tcp", cfg.Listen)
	if err != nil {
		return fmt.Errorf("listen on %s: %w (change `listen` in the config)", cfg.Listen, err)
	}
	httpSrv := &http.Server{Handler: srv, ReadHeaderTimeout: 10 * time.Second}
	log.Info("router listening", "addr", "http://"+ln.Addr().String(), "replica", replica,
		"prompts", len(prompts.All()), "providers", len(targets), "routes", len(routeNames))
	errc := make(chan error, 1)
	go func() { errc <- httpSrv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	log.Info("shutting down: finishing in-flight requests and attempts")
	sctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	_ = httpSrv.Shutdown(sctx)
	stopRecovery()
	runner.Stop(sctx)
	ops.stop() // before the database closes: the publisher removes this replica's rows
	if err := <-errc; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// resolve makes a config-relative path absolute-ish.
func resolve(cfg *config.Config, p string) string {
	if filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(cfg.Dir, p)
}

func replicaID() string {
	host, _ := os.Hostname()
	return fmt.Sprintf("%s-%d-%s", host, os.Getpid(), uuid.NewString()[:8])
}

func staticKeys(cfg *config.Config) (map[string]string, error) {
	keys := map[string]string{}
	for _, k := range cfg.APIKeys {
		v := os.Getenv(k.KeyEnv)
		if v == "" {
			return nil, fmt.Errorf("api_keys: environment variable %s (owner %s) is empty: set it, or remove the entry and use `router keys create`", k.KeyEnv, k.Owner)
		}
		keys[v] = k.Owner
	}
	return keys, nil
}

func newLogger(c config.Log) *slog.Logger {
	var level slog.Level
	_ = level.UnmarshalText([]byte(c.Level))
	opts := &slog.HandlerOptions{Level: level}
	if c.Format == "json" {
		return slog.New(slog.NewJSONHandler(os.Stderr, opts))
	}
	return slog.New(slog.NewTextHandler(os.Stderr, opts))
}
