// Command routerprof is `router serve` (the same internal/server wiring) plus
// what a benchmark needs to explain its numbers: net/http/pprof and a statement
// counter on the database pool, both on a separate debug address. It exists only
// for bench/.
//
//	routerprof --config router.yaml --debug 127.0.0.1:6060
//
// GET /debug/bench on the debug address returns the statement, transaction and
// allocation counters as JSON; /debug/pprof/ is the usual pprof index.
package main

import (
	"context"
	"flag"
	"fmt"
	"net"
	"os"
	"os/signal"
	"syscall"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/routerhq/router/internal/config"
	"github.com/routerhq/router/internal/server"
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
	tracer := newCounter()
	srv, err := server.New(ctx, cfg, server.Options{TunePool: func(c *pgxpool.Config) { c.ConnConfig.Tracer = tracer }})
	if err != nil {
		return err
	}
	defer srv.Close()
	go serveDebug(debug, tracer, server.NewLogger(cfg.Log))
	ln, err := net.Listen("tcp", cfg.Listen)
	if err != nil {
		return err
	}
	return srv.Serve(ctx, ln)
}
