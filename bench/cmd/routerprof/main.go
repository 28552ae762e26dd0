// Command routerprof is the router's serve path (API, race runner, store) built
// with the same packages as `router serve`, plus what a benchmark needs to explain
// its numbers: net/http/pprof and a statement counter on the database pool, both
// on a separate debug address. It exists only for bench/: production code is not
// changed to profile it.
//
//	routerprof --config router.yaml --debug 127.0.0.1:6060
//
// GET /debug/bench on the debug address returns the statement, transaction and
// allocation counters as JSON; /debug/pprof/ is the usual pprof index.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/routerhq/router/internal/api"
	"github.com/routerhq/router/internal/config"
	"github.com/routerhq/router/internal/prompt"
	"github.com/routerhq/router/internal/race"
	"github.com/routerhq/router/internal/store"
)

func main() {
	cfgPath := flag.String("config", "router.yaml", "router configuration")
	debug := flag.String("debug", "127.0.0.1:6060", "address of the pprof and counter endpoints")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, *cfgPath, *debug); err != nil {
		fmt.Fprintln(os.Stderr, "routerprof:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, cfgPath, debug string) error {
	cfg, err := config.Load(cfgPath)
	if err != nil {
		return err
	}
	log := newLogger(cfg.Log)
	prompts, err := prompt.LoadDir(abs(cfg, cfg.PromptsDir))
	if err != nil {
		return err
	}
	targets, err := buildTargets(cfg)
	if err != nil {
		return err
	}
	url := os.Getenv("DATABASE_URL")
	if url == "" {
		url = cfg.DatabaseURL
	}
	tracer := newCounter()
	pool, err := connect(ctx, url, tracer)
	if err != nil {
		return err
	}
	defer pool.Close()
	st := store.New(pool, store.Options{KeyRetention: cfg.Idempotency.Retention.D()})
	if _, err := st.Migrate(ctx); err != nil {
		return err
	}
	listener := store.NewListener(pool, log)
	lctx, stopListener := context.WithCancel(context.WithoutCancel(ctx))
	defer stopListener()
	go listener.Run(lctx)
	replica := fmt.Sprintf("routerprof-%d", os.Getpid())
	runner := race.New(race.Config{
		Store: st, Listener: listener, Prompts: prompts, Targets: targets, Routes: buildRoutes(cfg),
		LeaseOwner: replica, Lease: cfg.Execution.Lease.D(), Log: log,
	})
	routes := map[string]bool{}
	for name := range cfg.Routes {
		routes[name] = true
	}
	keys := map[string]string{}
	for _, k := range cfg.APIKeys {
		keys[os.Getenv(k.KeyEnv)] = k.Owner
	}
	rctx, stopRecovery := context.WithCancel(context.WithoutCancel(ctx))
	defer stopRecovery()
	go runner.RunRecovery(rctx, race.RecoveryConfig{})
	srv := api.New(api.Config{
		MaxBodyBytes: cfg.HTTP.MaxBodyBytes, DefaultWait: cfg.HTTP.DefaultWait.D(), MaxWait: cfg.HTTP.MaxWait.D(),
		LeaseOwner: replica, Lease: cfg.Execution.Lease.D(),
		RequireChatKey: cfg.Chat.RequireIdempotencyKey, ChatWait: cfg.Chat.Wait.D(),
	}, api.Deps{
		Store: st, Listener: listener, Prompts: prompts, Routes: routes, Exec: runner,
		Auth: &api.KeyAuth{Static: keys, Store: st}, Log: log,
	})
	go serveDebug(debug, tracer, log)
	ln, err := net.Listen("tcp", cfg.Listen)
	if err != nil {
		return err
	}
	httpSrv := &http.Server{Handler: srv, ReadHeaderTimeout: 10 * time.Second}
	errc := make(chan error, 1)
	go func() { errc <- httpSrv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	_ = httpSrv.Shutdown(sctx)
	stopRecovery()
	runner.Stop(sctx)
	if err := <-errc; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

func abs(cfg *config.Config, p string) string {
	if filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(cfg.Dir, p)
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
