// Package server assembles a serving router from its configuration: prompts,
// provider adapters, the database (configured or embedded), the race runner
// with its recovery loop, breakers, the conformance gate, metrics and the HTTP
// API, and runs it until its context ends, shutting down in order. cmd/router's
// `serve` and the benchmark's profiling build both run this one wiring.
//
// It owns no behaviour of its own: every rule lives in the packages it wires.
package server

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
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/routerhq/router/internal/api"
	"github.com/routerhq/router/internal/config"
	"github.com/routerhq/router/internal/prompt"
	"github.com/routerhq/router/internal/race"
	"github.com/routerhq/router/internal/store"
)

// Options adjust the wiring.
type Options struct {
	// TunePool, when set, adjusts the database pool's configuration (for
	// example to trace statements in benchmarks).
	TunePool func(*pgxpool.Config)
}

// Server is a router ready to serve.
type Server struct {
	Handler http.Handler
	Replica string
	log     *slog.Logger
	runner  *race.Runner
	stops   []func() // in reverse order of start
}

// New builds the router for cfg. Close releases what it started.
func New(ctx context.Context, cfg *config.Config, opt Options) (_ *Server, err error) {
	log := NewLogger(cfg.Log)
	s := &Server{log: log, Replica: replicaID()}
	defer func() {
		if err != nil {
			s.Close()
		}
	}()
	prompts, err := prompt.LoadDir(Resolve(cfg, cfg.PromptsDir))
	if err != nil {
		return nil, err
	}
	targets, err := BuildTargets(cfg)
	if err != nil {
		return nil, err
	}
	for name, r := range cfg.Routes {
		if r.ConformancePrompt == "" {
			continue
		}
		if _, err := prompts.Get(r.ConformancePrompt, ""); err != nil {
			return nil, fmt.Errorf("routes.%s.conformance_prompt: %w", name, err)
		}
	}
	apiKeys, err := staticKeys(cfg)
	if err != nil {
		return nil, err
	}
	var tune []func(*pgxpool.Config)
	if opt.TunePool != nil {
		tune = append(tune, opt.TunePool)
	}
	pool, closeDB, err := OpenDatabase(ctx, cfg, log, tune...)
	if err != nil {
		return nil, err
	}
	s.stops = append(s.stops, closeDB)
	st := store.New(pool, store.Options{KeyRetention: cfg.Idempotency.Retention.D()})
	if *cfg.AutoMigrate {
		applied, err := st.Migrate(ctx)
		if err != nil {
			return nil, err
		}
		if len(applied) > 0 {
			log.Info("migrations applied", "migrations", applied)
		}
	}
	life, err := startLifecycle(ctx, cfg, st, pool, s.Replica, log)
	if err != nil {
		return nil, err
	}
	s.stops = append(s.stops, life.stop)
	listener := store.NewListener(pool, log)
	s.background(func(ctx context.Context) { listener.Run(ctx) })

	ops := startOps(ctx, cfg, st, pool, s.Replica, log)
	s.stops = append(s.stops, ops.stop) // before the database closes: the publisher removes this replica's rows
	s.runner = race.New(race.Config{
		Store: st, Listener: listener, Prompts: prompts, Targets: targets, Routes: BuildRoutes(cfg),
		LeaseOwner: s.Replica, Lease: cfg.Execution.Lease.D(), ReconcileAfter: cfg.Execution.ReconcileAfter.D(), Log: log,
		Backoff: race.Backoff{Base: cfg.Execution.Retry.Base.D(), Cap: cfg.Execution.Retry.Cap.D(),
			MaxRetryAfter: cfg.Execution.Retry.MaxRetryAfter.D()},
		Gate: ops.gate, Admission: ops.breakers, Observer: ops.metrics,
	})
	s.background(func(ctx context.Context) { s.runner.RunRecovery(ctx, race.RecoveryConfig{Leader: life.leader}) })

	routeNames, models := map[string]bool{}, map[string]string{}
	for name, r := range cfg.Routes {
		routeNames[name] = true
		for _, m := range r.Models {
			models[m] = name
		}
	}
	srv := api.New(api.Config{
		MaxBodyBytes: cfg.HTTP.MaxBodyBytes, DefaultWait: cfg.HTTP.DefaultWait.D(), MaxWait: cfg.HTTP.MaxWait.D(),
		LeaseOwner: s.Replica, Lease: cfg.Execution.Lease.D(),
		RequireChatKey: cfg.Chat.RequireIdempotencyKey, ChatWait: cfg.Chat.Wait.D(),
	}, api.Deps{
		Store: st, Listener: listener, Prompts: prompts, Routes: routeNames, Models: models, Exec: s.runner,
		Auth: api.NewCachedAuth(&api.KeyAuth{Static: apiKeys, Store: st}, cfg.Auth.CacheTTL.D()), Log: log, Counters: ops.metrics,
	})
	ops.mount(srv, cfg, st)
	s.Handler = srv
	log.Info("router ready", "replica", s.Replica, "prompts", len(prompts.All()), "providers", len(targets), "routes", len(routeNames))
	return s, nil
}

// background runs fn until Close.
func (s *Server) background(fn func(ctx context.Context)) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); fn(ctx) }()
	s.stops = append(s.stops, func() { cancel(); <-done })
}

// Serve serves HTTP on ln until ctx ends, then shuts down in order: no new
// requests, in-flight requests and attempts finish (up to 20 s; attempts still
// running after that are abandoned to recovery), background work stops.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	httpSrv := &http.Server{Handler: s.Handler, ReadHeaderTimeout: 10 * time.Second}
	s.log.Info("router listening", "addr", "http://"+ln.Addr().String())
	errc := make(chan error, 1)
	go func() { errc <- httpSrv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	s.log.Info("shutting down: finishing in-flight requests and attempts")
	sctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	_ = httpSrv.Shutdown(sctx)
	s.runner.Stop(sctx)
	if err := <-errc; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// Close stops everything New started, newest first.
func (s *Server) Close() {
	for i := len(s.stops) - 1; i >= 0; i-- {
		s.stops[i]()
	}
	s.stops = nil
}

// Resolve makes a config-relative path usable from the working directory.
func Resolve(cfg *config.Config, p string) string {
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

// NewLogger is the router's slog logger for the log settings.
func NewLogger(c config.Log) *slog.Logger {
	var level slog.Level
	_ = level.UnmarshalText([]byte(c.Level))
	opts := &slog.HandlerOptions{Level: level}
	if c.Format == "json" {
		return slog.New(slog.NewJSONHandler(os.Stderr, opts))
	}
	return slog.New(slog.NewTextHandler(os.Stderr, opts))
}
