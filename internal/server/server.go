// Package server assembles a serving router from its configuration: prompts,
// provider adapters, the database (configured or embedded), the race runner
// with its recovery loop, breakers, the conformance gate, metrics, the tenant
// HTTP API and the operator surface, and runs both listeners until its context
// ends, shutting down in order (SPEC §17). cmd/router's `serve` runs this
// wiring.
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
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/routerhq/router/internal/api"
	"github.com/routerhq/router/internal/config"
	"github.com/routerhq/router/internal/metrics"
	"github.com/routerhq/router/internal/prompt"
	"github.com/routerhq/router/internal/race"
	"github.com/routerhq/router/internal/store"
	"github.com/routerhq/router/internal/telemetry"
)

// Options adjust the wiring.
type Options struct {
	// StopNow ends when the operator wants the router stopped at once rather
	// than drained (a second SIGTERM or Ctrl-C during the shutdown): Close
	// then stops waiting for webhook deliveries in flight (they are recorded
	// as interrupted and retried later) and for database connections still
	// in use. nil: never. Server.StopNow cuts the attempts' drain.
	StopNow context.Context
	// Version is this binary's version (cmd/router: conformance.Version(),
	// what `router version` prints first), the service.version of the
	// traces' resource, so a rolling update's traces can be told apart by
	// build. Empty: the resource has none (OTEL_RESOURCE_ATTRIBUTES may set
	// one).
	Version string
}

// Server is a router ready to serve.
type Server struct {
	// Handler is the tenant API (SPEC §4 without the operator endpoints).
	Handler http.Handler
	// OpsHandler is the operator surface (dashboard, metrics, providers,
	// conformance), served on ops_listen.
	OpsHandler http.Handler
	Replica    string
	log        *slog.Logger
	api        *api.Server
	runner     *race.Runner
	auth       *api.CachedAuth // the tenant API's key cache
	listener   *store.Listener // job changes and key revocations from the database
	leader     leaseHolder     // resigned when the replica starts draining
	opsListen  string
	shutdown   config.Shutdown
	stopNow    context.Context // Options.StopNow (nil: never)
	stops      []func()        // in reverse order of start

	http config.HTTP // both listeners' body limit and timeouts
}

// New builds the router for cfg. Close releases what it started.
func New(ctx context.Context, cfg *config.Config, opt Options) (_ *Server, err error) {
	log, err := Logger(cfg.Log)
	if err != nil {
		return nil, err
	}
	blankKeepAlive, err := cfg.Chat.BlankKeepAlive() // Load refuses it too; a Config built in code is checked here
	if err != nil {
		return nil, err
	}
	s := &Server{log: log, Replica: replicaID(), opsListen: cfg.OpsListen, shutdown: cfg.Shutdown, http: cfg.HTTP, stopNow: opt.StopNow}
	defer func() {
		if err != nil {
			s.Close()
		}
	}()
	shutdownTraces, tracing, err := telemetry.SetupLogged(ctx, opt.Version, log)
	if err != nil {
		return nil, err
	}
	if tracing {
		log.Info("exporting OpenTelemetry traces (OTLP)")
		s.stops = append(s.stops, func() {
			sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			if err := shutdownTraces(sctx); err != nil {
				log.Warn("could not flush traces", "err", err)
			}
		})
	}
	// The prompts and everything read from the environment (Check runs the
	// same prepare).
	p, err := prepare(cfg)
	if err != nil {
		return nil, err
	}
	prompts, targets, apiKeys, opsKey := p.prompts, p.targets, p.apiKeys, p.opsKey
	// The providers' keep-alive connections (and each one's two goroutines)
	// are closed last but for the traces' flush: after everything that
	// calls a provider has stopped — attempts, recovery's reconciliation,
	// the conformance gate's probes. Left alone, they outlived Close by the
	// transports' idle timeout (90 s). Found by review.
	s.stops = append(s.stops, p.closeIdle)
	for _, w := range shortKeyWarnings(cfg, opsKey) {
		log.Warn(w)
	}
	logTargetWarnings(cfg, log)
	// The database counters exist before the pool: its connections report
	// their round trips to them (router_db_* on /metrics).
	dbm := metrics.NewDB()
	pool, closeDB, err := openDatabase(ctx, cfg, log, opt.StopNow, func(c *pgxpool.Config) { c.ConnConfig.Tracer = dbm.Tracer() })
	if err != nil {
		return nil, err
	}
	s.stops = append(s.stops, closeDB)
	st := store.New(pool, store.Options{KeyRetention: cfg.Idempotency.Retention.D(),
		RedeliveryWindow: cfg.Webhooks.RedeliveryWindow(), Observer: dbm, Log: log})
	// Closed just before the pool, after the lifecycle's stop (the
	// elector's Run resigns as it ends): its leader lease connection.
	s.stops = append(s.stops, st.Close)
	if *cfg.AutoMigrate {
		applied, err := st.Migrate(ctx)
		if len(applied) > 0 {
			log.Info("migrations applied", "migrations", applied)
		}
		if err != nil {
			return nil, err
		}
	}
	life, err := startLifecycle(ctx, cfg, st, pool, s.Replica, log, opt.StopNow)
	if err != nil {
		return nil, err
	}
	s.stops = append(s.stops, life.stop)
	s.leader = life.leader
	listener := store.NewListener(pool, log)
	listener.SkipNotificationsOf(st) // the runner below announces its wins in memory
	// A revoked key is forgotten as its revocation's notification arrives;
	// the whole cache when the listener (re)connects (SPEC §16).
	auth := api.NewCachedAuth(&api.KeyAuth{Static: apiKeys, Store: st}, cfg.Auth.CacheTTL.D())
	listener.OnAPIKeyRevoked(auth.Evict, auth.Clear)
	s.auth, s.listener = auth, listener
	s.background(func(ctx context.Context) { listener.Run(ctx) })

	ops := startOps(ctx, cfg, prompts, st, pool, dbm, s.Replica, log)
	life.registerMetrics(ops.metrics)   // router_webhook_deliveries_total, router_maintenance_leader, router_retention_* on /metrics
	s.stops = append(s.stops, ops.stop) // before the database closes: the publisher removes this replica's rows
	s.runner = race.New(race.Config{
		Store: st, Listener: listener, Prompts: prompts, Targets: targets, Routes: BuildRoutes(cfg),
		LeaseOwner: s.Replica, Lease: cfg.Execution.Lease.D(), ReconcileAfter: cfg.Execution.ReconcileAfter.D(), HandoverWait: cfg.Execution.HandoverWait.D(), Log: log,
		Backoff: race.Backoff{Base: cfg.Execution.Retry.Base.D(), Cap: cfg.Execution.Retry.Cap.D(),
			MaxRetryAfter: cfg.Execution.Retry.MaxRetryAfter.D()},
		Gate: ops.gate, Admission: ops.breakers, Observer: ops.metrics,
	})
	s.background(func(ctx context.Context) { s.runner.RunRecovery(ctx, race.RecoveryConfig{Leader: life.leader}) })
	// Beside the start, not before it: it only informs.
	s.background(func(ctx context.Context) { warnGatedTargets(ctx, cfg, st, prompts, ops.gate, log) })

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
		RequireChatKey: cfg.Chat.RequireIdempotencyKey, ChatWait: cfg.Chat.Wait.D(), StreamBlankKeepAlive: blankKeepAlive,
		Limits: apiLimits(cfg.Limits), OwnerLimits: ownerLimits(cfg),
	}, api.Deps{
		Store: st, Listener: listener, Prompts: prompts, Routes: routeNames, Models: models, Exec: s.runner,
		Auth: auth, Log: log, Counters: ops.metrics,
	})
	s.OpsHandler = ops.handler(cfg, st, prompts, opsKey, log)
	readTenantBodies(srv, cfg.HTTP) // only once the API key is valid
	s.api, s.Handler = srv, srv
	log.Info("router ready", "replica", s.Replica, "prompts", len(prompts.All()), "providers", len(cfg.Providers), "targets", len(targets), "routes", len(routeNames))
	return s, nil
}

// LoadPrompts loads the prompts directory and checks it against the
// configuration's routes (checkPrompts). When the configuration does not
// name one and the default ./prompts does not exist, no prompt is served (a
// router of chat completions only needs none).
func LoadPrompts(cfg *config.Config) (*prompt.Set, error) {
	dir := Resolve(cfg, cfg.PromptsDir)
	prompts := prompt.EmptySet()
	if _, err := os.Stat(dir); !cfg.PromptsDirDefault || !errors.Is(err, os.ErrNotExist) {
		if prompts, err = prompt.LoadDir(dir); err != nil {
			return nil, err
		}
	}
	if err := checkPrompts(cfg, prompts); err != nil {
		return nil, err
	}
	return prompts, nil
}

// leaseHolder is the maintenance leader's elector (*maintenance.Elector) as
// the shutdown uses it: an interface, so a test can see when the step-down
// ends.
type leaseHolder interface {
	StepDown(ctx context.Context) error
}

// stepDown gives up the maintenance leader's lease as the replica starts
// draining: recovery, which adopts the jobs this replica hands over, runs on
// the leader, so another replica must lead now rather than after the drain.
// A resignation that cannot finish within a second is left to the lease's
// expiry.
func (s *Server) stepDown() {
	if s.leader == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	_ = s.leader.StepDown(ctx) // it logs why it could not
}

// background runs fn until Close.
func (s *Server) background(fn func(ctx context.Context)) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); fn(ctx) }()
	s.stops = append(s.stops, func() { cancel(); <-done })
}

// Serve serves the tenant API on ln and the operator surface on ops_listen
// until ctx ends, then shuts down (see ServeListeners).
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	opsLn, err := net.Listen("tcp", s.opsListen)
	if err != nil {
		return fmt.Errorf("listen on %s: %w (change `ops_listen` in the config)", s.opsListen, err)
	}
	return s.ServeListeners(ctx, ln, opsLn)
}

// ServeListeners serves the tenant API on ln and the operator surface on
// opsLn until ctx ends, then shuts down (SPEC §17): waiting callers are
// answered at once with their jobs as they stand; the tenant listener stops
// accepting; open requests get up to shutdown.http to finish (past it they are
// cut: their contexts, and so their queries, cancelled, their connections
// closed); the runner starts no new attempt and hands jobs with nothing in
// flight to other replicas, while attempts in flight get up to shutdown.drain
// to finish (past it they are cut, each recorded for what is known of it, and
// their jobs left to recovery); meanwhile the replica gives up the
// maintenance leader's lease, without delaying the rest; then the operator
// listener, which served the drain's metrics, closes (its requests get a
// second) and background work stops. It returns once the tenant requests it
// cut have returned too (awaitCut, up to cutRequestsWait): Close closes the
// database next, and a cut request may still be handing over the job its
// claim created.
func (s *Server) ServeListeners(ctx context.Context, ln, opsLn net.Listener) error {
	open := &openRequests{}
	httpSrv := newHTTPServer(open.wrap(s.Handler), s.http)
	opsSrv := newOpsServer(s.OpsHandler, s.http)
	// Requests' contexts derive from these, cancelled when a listener's
	// shutdown budget runs out (shutdownWithin).
	cutRequests := cuttable(httpSrv)
	cutOps := cuttable(opsSrv)
	defer cutRequests()
	defer cutOps()
	s.log.Info("router listening", "api", "http://"+ln.Addr().String(), "ops", "http://"+opsLn.Addr().String(),
		"dashboard", "http://"+opsLn.Addr().String()+"/dashboard")
	errc := make(chan error, 2)
	go func() { errc <- httpSrv.Serve(ln) }()
	go func() { errc <- opsSrv.Serve(opsLn) }()
	var served error
	select {
	case served = <-errc:
	case <-ctx.Done():
	}
	s.log.Info("shutting down: answering waiting callers, finishing in-flight attempts, handing the rest over",
		"http_budget", s.shutdown.HTTP.D(), "drain_budget", s.shutdown.Drain.D())
	s.api.Drain()
	s.runner.Drain(s.shutdown.Drain.D())
	// The step-down (a database write of up to a second) runs beside the
	// rest: the tenant listener closes at once, not once the lease is given
	// up, and nothing of the drain waits for it — jobs handed over are
	// adopted by whichever replica leads next.
	var wg sync.WaitGroup
	wg.Go(s.stepDown)
	wg.Go(func() {
		s.shutdownWithin(httpSrv, s.shutdown.HTTP.D(), cutRequests, "tenant")
		awaitCut(open, s.stopNow, s.log)
	})
	wg.Go(func() {
		rctx, cancel := context.WithTimeout(context.Background(), s.shutdown.Drain.D())
		defer cancel()
		s.runner.Stop(rctx)
	})
	wg.Wait()
	s.shutdownWithin(opsSrv, time.Second, cutOps, "operator")
	for _, err := range []error{served, <-errc} {
		if err != nil && !errors.Is(err, http.ErrServerClosed) {
			return err
		}
	}
	return nil
}

// cuttable gives hs's requests a base context and returns its cancel, which
// cancels every request's context: a handler still waiting when the shutdown's
// budget runs out (on a row another session holds, say) has its queries
// cancelled and returns its database connection.
// The cause (api.ErrCutAtShutdown) tells the API that the router, not the
// caller, ended the request: counted 503, not 499 (client closed request).
func cuttable(hs *http.Server) (cut context.CancelFunc) {
	base, cutCause := context.WithCancelCause(context.Background())
	hs.BaseContext = func(net.Listener) context.Context { return base }
	return func() { cutCause(api.ErrCutAtShutdown) }
}

// shutdownWithin shuts hs down, letting open requests finish for up to
// budget; past it the requests still open are cut: their contexts cancelled
// (cut) and their connections closed. Shutdown alone would return leaving them
// running, each holding the database connection it waits on, and closing the
// pool (Close) would wait for them for ever.
func (s *Server) shutdownWithin(hs *http.Server, budget time.Duration, cut context.CancelFunc, listener string) {
	ctx, cancel := context.WithTimeout(context.Background(), budget)
	defer cancel()
	if err := hs.Shutdown(ctx); err != nil {
		s.log.Warn("requests still open when the shutdown's budget ran out: cutting them", "listener", listener, "budget", budget, "err", err)
		cut()
		_ = hs.Close()
	}
}

// newOpsServer is the http.Server of the operator listener. Unlike the tenant
// listener's handler, h is not given a body reader (withBodyRead): no
// operator endpoint takes a body, and internal/ops refuses a request with one
// — after its key and Host are checked, and without reading it — closing the
// connection, so a client without the operator key cannot make the router
// buffer http.max_body_bytes or wait http.read_body_timeout before its 401.
func newOpsServer(h http.Handler, c config.HTTP) *http.Server { return newHTTPServer(h, c) }

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

// staticKeys maps each configured bearer key to its owner. A key that two
// variables hold for two owners is refused: it would authenticate as whichever
// came last.
func staticKeys(cfg *config.Config) (map[string]string, error) {
	keys, from := map[string]string{}, map[string]string{}
	var errs []error
	for i, k := range cfg.APIKeys {
		// A secret made from a file often ends in a newline, which no
		// Authorization header can carry: the key is read without it.
		v := strings.TrimSpace(os.Getenv(k.KeyEnv))
		if v == "" {
			// The setting's path, and the variable's name only when it
			// looks like one (config.EnvRef): not a key pasted in its place.
			errs = append(errs, fmt.Errorf("api_keys[%d].key_env: %s (owner %s) is empty or only white space: set it, or remove the entry and use `router keys create`", i, config.EnvRef(k.KeyEnv), k.Owner))
			continue
		}
		if blankInside(v) {
			// An Authorization header carries a key without white space or
			// control characters (RFC 6750; api's bearer refuses one with
			// more than one word): this key could never be sent.
			errs = append(errs, fmt.Errorf("api_keys[%d].key_env: %s (owner %s) holds white space or a control character inside the key, which no 'Authorization: Bearer <key>' header can carry: set a key without spaces (for example from `openssl rand -hex 32`)", i, config.EnvRef(k.KeyEnv), k.Owner))
			continue
		}
		if owner, dup := keys[v]; dup && owner != k.Owner {
			errs = append(errs, fmt.Errorf("api_keys: %s (owner %s) and %s (owner %s) hold the same key, which would authenticate as only one of them: give each owner its own key", config.EnvRef(from[v]), owner, config.EnvRef(k.KeyEnv), k.Owner))
			continue
		}
		keys[v], from[v] = k.Owner, k.KeyEnv
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return keys, nil
}

// operatorKey reads the operator key named by ops_key_env. It refuses a
// public ops_listen without one (config.Validate already requires the name).
func operatorKey(cfg *config.Config) (string, error) {
	key := ""
	if cfg.OpsKeyEnv != "" {
		if key = strings.TrimSpace(os.Getenv(cfg.OpsKeyEnv)); key == "" {
			return "", fmt.Errorf("ops_key_env: %s is empty or only white space: set it to the operator key, or remove ops_key_env (only allowed when ops_listen is a loopback address)", config.EnvRef(cfg.OpsKeyEnv))
		}
	}
	if key == "" && !config.IsLoopback(cfg.OpsListen) {
		return "", fmt.Errorf("ops_listen %s is not a loopback address and no operator key is set: set ops_key_env to the name of an environment variable holding the key, or bind ops_listen to 127.0.0.1", cfg.OpsListen)
	}
	return key, nil
}

// minKeyLength is the length below which a configured tenant or operator key
// served on a listener that is not a loopback address is warned about at
// start (shortKeyWarnings): it can be guessed. `router keys create` makes
// keys far longer.
const minKeyLength = 16

// shortKeyWarnings are the start-up warnings about configured keys shorter
// than minKeyLength on a listener that is not a loopback address: each
// api_keys entry's when listen is not, the operator key when ops_listen is
// not. They name the key's owner and variable, never the key, and say how to
// make one. Only a warning: a configuration that loaded before still does
// (its keys may be long enough for where it runs); a loopback listener, as
// the demo's, is never warned about.
func shortKeyWarnings(cfg *config.Config, opsKey string) []string {
	const howTo = "make one with `openssl rand -hex 32`"
	var out []string
	if !config.IsLoopback(cfg.Listen) {
		for i, k := range cfg.APIKeys {
			if n := utf8.RuneCountInString(strings.TrimSpace(os.Getenv(k.KeyEnv))); n > 0 && n < minKeyLength {
				out = append(out, fmt.Sprintf("api_keys[%d].key_env: %s holds owner %s's API key, only %d characters long (fewer than %d), on listen %s, which is not a loopback address: such a key can be guessed; set a longer one (%s, or give the owner a key made by `router keys create`)",
					i, config.EnvRef(k.KeyEnv), k.Owner, n, minKeyLength, cfg.Listen, howTo))
			}
		}
	}
	if n := utf8.RuneCountInString(opsKey); n > 0 && n < minKeyLength && !config.IsLoopback(cfg.OpsListen) {
		out = append(out, fmt.Sprintf("ops_key_env: %s holds the operator key, only %d characters long (fewer than %d), on ops_listen %s, which is not a loopback address: such a key can be guessed, and it opens every owner's jobs; set a longer one (%s)",
			config.EnvRef(cfg.OpsKeyEnv), n, minKeyLength, cfg.OpsListen, howTo))
	}
	return out
}

// notATenantsKey refuses an operator key that is also a tenant's (static)
// key: that tenant would open the operator surface, which shows every
// owner's jobs (config.Validate refuses the same variable named twice; this
// catches two variables holding one value).
func notATenantsKey(cfg *config.Config, opsKey string, apiKeys map[string]string) error {
	if owner, ok := apiKeys[opsKey]; ok && opsKey != "" {
		return fmt.Errorf("ops_key_env: environment variable %s holds the same key as owner %s's api_keys entry: that tenant's key would open the operator surface, which shows every owner's jobs; give the operator key a value of its own", cfg.OpsKeyEnv, owner)
	}
	return nil
}

func apiLimits(l config.Limits) api.Limits {
	var out api.Limits
	if l.MaxLiveJobs != nil {
		out.MaxLiveJobs = *l.MaxLiveJobs
	}
	if l.RequestsPerSecond != nil {
		out.RequestsPerSecond = *l.RequestsPerSecond
	}
	if l.Burst != nil {
		out.Burst = *l.Burst
	}
	return out
}

// ownerLimits are the limits of owners with configured keys; owners of stored
// keys get the top-level defaults.
func ownerLimits(cfg *config.Config) map[string]api.Limits {
	out := map[string]api.Limits{}
	for _, k := range cfg.APIKeys {
		out[k.Owner] = apiLimits(cfg.Limits.Over(k.Limits))
	}
	return out
}
