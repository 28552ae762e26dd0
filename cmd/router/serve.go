package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"strings"
	"time"

	"github.com/routerhq/router/conformance"
	"github.com/routerhq/router/internal/config"
	"github.com/routerhq/router/internal/ops"
	"github.com/routerhq/router/internal/server"
)

func runServe(ctx context.Context, args []string) error {
	fs := newFlags("serve", "router serve [--config router.yaml] [--debug-listen 127.0.0.1:6060]",
		"Runs the router's HTTP API. Without database_url or DATABASE_URL (or with database_url: embedded) it starts the embedded local PostgreSQL.\n"+
			"On SIGTERM or Ctrl-C it drains (up to shutdown.drain); a second signal stops it at once.")
	cfgPath := configFlag(fs)
	debugAddr := fs.String("debug-listen", "", "address serving net/http/pprof under /debug/pprof/ (off when empty; it is unauthenticated, so keep it on loopback)")
	if err := parseNoArgs(fs, args); err != nil {
		return err
	}
	// Given but blank (`--debug-listen "$ADDR"` with $ADDR unset): refused,
	// not read as left out, which would start without the listener asked for.
	if flagsGiven(fs)["debug-listen"] && strings.TrimSpace(*debugAddr) == "" {
		return usagef("--debug-listen %q names no address: give one on loopback, e.g. --debug-listen 127.0.0.1:6060, or leave --debug-listen out for no debug listener", *debugAddr)
	}
	cfg, err := config.Load(*cfgPath)
	if err != nil {
		return err
	}
	if err := requireRoutes(cfg, *cfgPath, "this router could serve no request (every job and chat completion would be refused) while it reported ready and took its share of traffic"); err != nil {
		return err
	}
	log, err := server.Logger(cfg.Log)
	if err != nil {
		return err
	}
	tuneGC(log)
	ln, err := listenFor(cfg.Listen, "listen")
	if err != nil {
		return err
	}
	opsLn, err := listenFor(cfg.OpsListen, "ops_listen")
	if err != nil {
		ln.Close()
		return err
	}
	var debugLn net.Listener
	if *debugAddr != "" {
		if debugLn, err = net.Listen("tcp", *debugAddr); err != nil {
			ln.Close()
			opsLn.Close()
			return fmt.Errorf("listen on --debug-listen %s: %w (pick a free address, e.g. 127.0.0.1:6060)", *debugAddr, err)
		}
	}
	return migrationHint(serve(ctx, cfg, ln, opsLn, debugLn), *cfgPath)
}

// requireRoutes refuses a configuration that defines no routes, before
// anything listens or the database is touched (started, connected to,
// migrated): an empty or truncated file — a config map that did not mount, a
// half-written deploy — loads, as every key has a default, and would
// otherwise start a router that can do nothing. why says what that would mean
// for the command. `keys`, `jobs` and `migrate` need only the database and do
// not call it.
func requireRoutes(cfg *config.Config, path, why string) error {
	if len(cfg.Routes) > 0 {
		return nil
	}
	example := "routes: {default: {providers: [PROVIDER]}}"
	if len(cfg.Providers) > 0 {
		example = "routes: {default: {providers: [" + cfg.Providers[0].Name + "]}}"
	}
	return fmt.Errorf("%s defines no routes, so %s: add a routes: section naming the providers each route tries, e.g. %s "+
		"(see demo/router.yaml and docs/configuration.md); a file that is empty or holds only some of its settings is usually "+
		"a configuration that was not mounted or was written only in part", path, why, example)
}

// serve runs the router's tenant API on ln, its operator surface on opsLn, and
// pprof on debugLn when it is not nil, until ctx ends; then it drains (see
// server.ServeListeners), unless secondSignal(ctx) ends too, which stops it
// at once (stopNowOn). It closes the listeners.
func serve(ctx context.Context, cfg *config.Config, ln, opsLn, debugLn net.Listener) error {
	defer ln.Close()
	defer opsLn.Close()
	if debugLn != nil {
		defer debugLn.Close()
	}
	now := secondSignal(ctx)
	srv, err := server.New(ctx, cfg, server.Options{StopNow: now, Version: conformance.Version()})
	if err != nil {
		if ctx.Err() != nil {
			// SIGTERM or Ctrl-C while starting (connecting, migrating): the
			// start-up's error is the signal's doing ("context canceled", or
			// "database unreachable" from a connection cut short), not a
			// failure, and nothing was served, so there is nothing to drain.
			server.NewLogger(cfg.Log).Info("stopped by a signal before the router was ready; nothing was served", "start_up", err)
			return nil
		}
		return err
	}
	// The last line of the shutdown, after everything below (the last before
	// it is otherwise a library's, River's "River client stopped").
	defer server.NewLogger(cfg.Log).Info("router stopped")
	// Deferred before Close, so it runs after: a second signal while Close
	// waits (on webhook deliveries) is still said and acted on.
	defer stopNowOn(now, srv, server.NewLogger(cfg.Log))()
	defer srv.Close()
	if debugLn != nil {
		stop := serveDebug(debugLn, server.NewLogger(cfg.Log))
		defer stop()
	}
	return srv.ServeListeners(ctx, ln, opsLn)
}

// stopNowOn stops srv at once when now ends (a second SIGTERM or Ctrl-C):
// the drain, which may last as long as the longest provider timeout, is cut
// short, and the shutdown goes on with what remains: the listeners, webhook
// deliveries (cut and retried later), the database pool (Close stops waiting
// for them on now too: serve gives it the same context). What it says
// depends on when the signal comes: while job runs are still going, their
// attempts are cut; after the drain, only the rest of the shutdown stops
// waiting. The returned func stops watching and returns once any stop it
// began is over.
func stopNowOn(now context.Context, srv *server.Server, log *slog.Logger) (release func()) {
	done, released := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		select {
		case <-now.Done():
			if n := srv.InFlight(); n > 0 {
				log.Warn("second signal: stopping now; attempts still in flight are cut (failed if the provider had begun answering, unknown if not) and their jobs handed over", "jobs", n)
			} else {
				log.Warn("second signal: stopping now; no attempt is in flight here: the rest of the shutdown stops waiting for webhook deliveries (cut, and retried later) and for database connections still in use")
			}
			srv.StopNow()
		case <-released:
		}
	}()
	return func() { close(released); <-done }
}

// serveDebug serves net/http/pprof on ln (on a mux of its own: nothing is
// registered on http.DefaultServeMux) until stop is called, only to requests
// addressed to a loopback host (loopbackHostOnly).
func serveDebug(ln net.Listener, log *slog.Logger) (stop func()) {
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	hs := &http.Server{Handler: loopbackHostOnly(mux), ReadHeaderTimeout: 10 * time.Second}
	log.Info("debug listener (pprof)", "addr", "http://"+ln.Addr().String()+"/debug/pprof/")
	if a, ok := ln.Addr().(*net.TCPAddr); ok && !a.IP.IsLoopback() {
		log.Warn("--debug-listen is not a loopback address: anyone who reaches it can profile this process and read its command line; use 127.0.0.1:PORT", "addr", ln.Addr().String())
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := hs.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error("debug listener stopped", "err", err)
		}
	}()
	return func() {
		// A CPU profile in progress holds its request open for its duration; do
		// not wait for it.
		_ = hs.Close()
		<-done
	}
}

// loopbackHostOnly refuses (421) a request whose Host is not a loopback
// address or localhost (ops.LocalHost), as the operator listener without an
// operator key does. The debug listener has no authentication, and a web page
// in a browser on this machine could otherwise rebind its own name to the
// listener's address (DNS rebinding) and read it as its own origin: the
// command line, goroutine and heap dumps, CPU profiles on demand. Such a page
// sends its own name as Host; go tool pprof and curl on http://127.0.0.1:PORT
// send a loopback one.
func loopbackHostOnly(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !ops.LocalHost(r.Host) {
			http.Error(w, fmt.Sprintf("this debug listener (--debug-listen) answers only requests addressed to a loopback host "+
				"(127.0.0.1, [::1] or localhost, any port), not Host %q: a web page could otherwise read it through DNS rebinding. "+
				"Open it as http://127.0.0.1:<port>/debug/pprof/ (through an SSH tunnel from another machine)", r.Host),
				http.StatusMisdirectedRequest)
			return
		}
		next.ServeHTTP(w, r)
	})
}
