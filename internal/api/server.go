// Package api owns the router's tenant HTTP API (SPEC §4): routing of requests,
// authentication of API keys to owners, per-owner limits (SPEC §17), request
// validation, problem+json errors, the job resource, and waiting for jobs
// (Prefer: wait), including answering waiters at once on shutdown (Drain). The
// operator endpoints live in internal/ops, on their own listener.
//
// It must not run attempts or talk to providers: it hands new jobs to an
// Executor, and reads and changes state only through internal/store.
package api

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"runtime/debug"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/routerhq/router/internal/metrics"
	rfcproblem "github.com/routerhq/router/internal/problem"
	"github.com/routerhq/router/internal/prompt"
	"github.com/routerhq/router/internal/store"
)

// Executor runs jobs. Submit must return quickly; the job runs in the background.
type Executor interface {
	// SubmitNew starts a job the API has just created, with the plan it was
	// created from (nil when none).
	SubmitNew(job *store.Job, plan store.JobPlan)
	// Submit starts or resumes any other job (after a resolution or a retry).
	Submit(job *store.Job)
	// Plan prepares a job's race before the job exists: whether any provider
	// could take it now (when none could, ok is false and routing explains
	// each provider) and the first attempt to create with it. err says the
	// job cannot run at all (its prompt does not render).
	Plan(job *store.Job) (plan store.JobPlan, routing json.RawMessage, ok bool, err error)
	// Cancel stops this process's in-flight work on a job (best effort; the
	// database already says it is cancelled).
	Cancel(jobID string)
}

// Config tunes the HTTP API.
type Config struct {
	MaxBodyBytes int64         // default 1 MiB
	DefaultWait  time.Duration // Prefer: wait when absent
	MaxWait      time.Duration // cap on Prefer: wait
	// LeaseOwner and Lease: a new job is created holding this process's
	// orchestration lease, so recovery elsewhere leaves it to us.
	LeaseOwner string
	Lease      time.Duration
	// RequireChatKey makes Idempotency-Key mandatory on /v1/chat/completions;
	// without it each call is its own intent.
	RequireChatKey bool
	// ChatWait is how long a chat completion call waits for its job (default 5m).
	ChatWait time.Duration
	// StreamKeepAlive is the longest a streaming chat caller goes without a
	// byte while the router waits for a valid answer: an SSE comment line is
	// sent at this interval (default 9s: SPEC §15 asks for one at least every
	// 10 s, and a ticker's tick plus a flush lands a little after its period).
	StreamKeepAlive time.Duration
	// StreamBlankKeepAlive sends that keep-alive as a bare blank line in
	// place of the comment (chat.keepalive: blank): every SSE client ignores
	// either, but go-openai gathers a stream's non-data lines into the body
	// of its error event, so after a comment it cannot read that event.
	StreamBlankKeepAlive bool
	// StreamWriteStall is the longest one write of a streaming chat answer
	// (its headers, a keep-alive comment, an event) may wait for the caller
	// to take it (default 30s). The HTTP server has no write timeout (long
	// waits, streams), so a caller that stops reading without closing its
	// connection would otherwise hold the handler in a write for as long as
	// the connection lasts; past it the stream ends, as for a caller that
	// left.
	StreamWriteStall time.Duration
	// Limits are every owner's limits unless OwnerLimits has the owner (SPEC §17).
	Limits      Limits
	OwnerLimits map[string]Limits
	// LiveRefresh is how often an owner's live job count is read from the
	// database for max_live_jobs (default 1s); between reads this replica adds
	// its own admissions.
	LiveRefresh time.Duration
	// RecheckEvery is how often a waiting caller's job is read although no
	// change was announced (default 5s): it bounds how late a waiter learns
	// of a change nobody told it of — a job this replica created but did not
	// finish, won by a replica that adopted it before this one's waiters
	// watched it (wins notify only watched jobs).
	RecheckEvery time.Duration
}

// WithDefaults fills unset fields.
func (c Config) WithDefaults() Config {
	if c.MaxBodyBytes <= 0 {
		c.MaxBodyBytes = 1 << 20
	}
	if c.MaxWait <= 0 {
		c.MaxWait = 60 * time.Second
	}
	if c.ChatWait <= 0 {
		c.ChatWait = 5 * time.Minute
	}
	if c.RecheckEvery <= 0 {
		c.RecheckEvery = 5 * time.Second
	}
	if c.StreamKeepAlive <= 0 {
		c.StreamKeepAlive = 9 * time.Second
	}
	if c.StreamWriteStall <= 0 {
		c.StreamWriteStall = 30 * time.Second
	}
	return c
}

// Deps are what the API needs.
type Deps struct {
	Store    *store.Store
	Listener *store.Listener
	Prompts  *prompt.Set
	Routes   map[string]bool // known route names
	// Models maps model names that chat completions may ask for to the route
	// that serves them (the name is passed through to its providers).
	Models map[string]string
	Exec   Executor
	Auth   Authenticator
	Log    *slog.Logger
	// Counters, when set, counts idempotent replays and key conflicts (metrics).
	Counters Counters
}

// Counters counts API-level idempotency events.
type Counters interface {
	IdempotentReplay()
	KeyConflict()
}

// RequestObserver is the optional capability of Counters that counts each
// request the API answers (internal/metrics: router_http_requests_total and
// router_http_request_duration_seconds). endpoint is the route pattern that
// took the request, "" for none.
type RequestObserver interface {
	RequestServed(method, endpoint string, status int, d time.Duration)
}

type nopCounters struct{}

func (nopCounters) IdempotentReplay() {}
func (nopCounters) KeyConflict()      {}

// Server is the HTTP API.
type Server struct {
	cfg Config
	Deps
	mux    *http.ServeMux
	routes http.Handler  // mux, inside what WrapRoutes added
	keyed  []*keyedRoute // the endpoints that take an API key (WrapAuthenticated)
	served RequestObserver
	limits *limiter
	drain  drainer
	// maxKey is the longest bearer token worth looking up (maxKeyBytes of
	// Deps.Auth), worked out once.
	maxKey int
	// started is when this API was built: a job created since (or shortly
	// before) comes from a replica of the current deployment (see
	// promptUnavailable). On this process's clock, as now reads it; a job's
	// creation is on the database's (startOnDBClock).
	started time.Time
	now     func() time.Time
	// migrated is set once readiness found the migrations current: they are
	// never undone (a newer schema keeps this binary ready, docs/operations.md
	// "Upgrading"), so a probe after that costs only its ping. migrating
	// (capacity 1) lets one probe at a time run the check while migrated is
	// unset; the others wait for its answer instead of each running it.
	migrated  atomic.Bool
	migrating chan struct{}
}

// New builds the API.
func New(cfg Config, d Deps) *Server {
	if d.Log == nil {
		d.Log = slog.New(slog.DiscardHandler)
	}
	if d.Counters == nil {
		d.Counters = nopCounters{}
	}
	s := &Server{cfg: cfg.WithDefaults(), Deps: d, mux: http.NewServeMux(), started: time.Now(), now: time.Now,
		migrating: make(chan struct{}, 1)}
	s.routes = s.mux
	s.served, _ = d.Counters.(RequestObserver)
	var counter LiveCounter
	if d.Store != nil {
		counter = d.Store
	}
	s.limits = newLimiter(s.cfg.Limits, s.cfg.OwnerLimits, s.cfg.LiveRefresh, counter)
	s.drain.init()
	s.maxKey = maxKeyBytes(d.Auth)
	s.mux.HandleFunc("POST /v1/jobs", s.authed(s.createJob))
	s.mux.HandleFunc("GET /v1/jobs", s.authed(s.listJobs))
	s.mux.HandleFunc("GET /v1/jobs/{id}", s.authed(s.getJob))
	s.mux.HandleFunc("GET /v1/jobs/{id}/events", s.authed(s.jobEvents))
	s.mux.HandleFunc("POST /v1/jobs/{id}/cancel", s.authed(s.cancelJob))
	s.mux.HandleFunc("POST /v1/jobs/{id}/retry", s.authed(s.retryJob))
	s.mux.HandleFunc("POST /v1/jobs/{id}/attempts/{seq}/resolve", s.authed(s.resolveAttempt))
	s.mux.HandleFunc("POST /v1/chat/completions", s.withOwner(s.chatCompletions, openAIAuthFail))
	s.mux.HandleFunc("GET /v1/models", s.withOwner(s.listModels, openAIAuthFail))
	s.mux.HandleFunc("GET /v1/models/{model...}", s.withOwner(s.getModel, openAIAuthFail))
	s.mux.HandleFunc("GET /healthz", s.healthz)
	s.mux.HandleFunc("GET /readyz", s.readyz)
	s.mux.HandleFunc("/", s.noEndpoint)
	return s
}

// noEndpoint answers a request no endpoint took: 405 with Allow when the
// path is an endpoint's but the method is not one it takes (RFC 9110
// §15.5.6), else 404. Like routing, it comes before authentication: which
// endpoints exist is public (docs/api.md). The caller's method and path are
// quoted clipped (rfcproblem.Clip), as the instance is.
func (s *Server) noEndpoint(w http.ResponseWriter, r *http.Request) {
	allow := s.allowedMethods(r)
	if len(allow) == 0 && slices.Contains(operatorPaths, r.URL.Path) {
		writeProblem(w, r, problem{Status: http.StatusNotFound, Type: "not-found", Title: "No such endpoint",
			Detail: r.URL.Path + " is served on the operator listener (`ops_listen`, default 127.0.0.1:9090), not on the tenant API; see docs/operations.md"})
		return
	}
	if endpoint, ok := openAINearMiss(r.URL.Path); ok && len(allow) == 0 {
		// An OpenAI SDK whose base_url lacks /v1 or ends in a slash: told
		// which endpoint it meant, in the shape it reads.
		writeOpenAIError(w, http.StatusNotFound, "invalid_request_error", "not_found", "", nearMissDetail(r, endpoint))
		return
	}
	if len(allow) == 0 && openAIUnserved(r.URL.Path) {
		// Another of OpenAI's endpoints, asked by an SDK whose base_url is
		// the router's: told what the router serves, in the shape it reads.
		writeOpenAIError(w, http.StatusNotFound, "invalid_request_error", "not_found", "",
			rfcproblem.Clip(r.Method)+" "+rfcproblem.Clip(r.URL.Path)+" is not served by this router: of OpenAI's API it serves only "+
				"POST /v1/chat/completions, GET /v1/models and GET /v1/models/{model} (besides its own jobs API, POST /v1/jobs); see docs/chat.md")
		return
	}
	if len(allow) == 0 {
		writeProblem(w, r, problem{Status: http.StatusNotFound, Type: "not-found", Title: "No such endpoint",
			Detail: rfcproblem.Clip(r.Method) + " " + rfcproblem.Clip(r.URL.Path) + " is not an endpoint of this router; see docs/api.md"})
		return
	}
	methods := strings.Join(allow, ", ")
	w.Header().Set("Allow", methods)
	detail := rfcproblem.Clip(r.Method) + " is not a method of " + rfcproblem.Clip(r.URL.Path) + ", which takes " + methods + "; see docs/api.md"
	if OpenAIShaped(r.URL.Path) {
		detail = strings.TrimSuffix(detail, "api.md") + "chat.md" // the OpenAI-compatible endpoints' page
		writeOpenAIError(w, http.StatusMethodNotAllowed, "invalid_request_error", "method_not_allowed", "", detail)
		return
	}
	writeProblem(w, r, problem{Status: http.StatusMethodNotAllowed, Type: "method-not-allowed", Title: "Method not allowed", Detail: detail})
}

// operatorPaths are the operator surface's endpoints (internal/ops), served
// on ops_listen only: a caller that asks the tenant listener for one is told
// where it is rather than that it does not exist.
var operatorPaths = []string{"/v1/providers", "/v1/conformance", "/metrics", "/dashboard"}

// routedMethods are the methods the API's endpoints are registered for (GET
// ones take HEAD too), probed for a 405's Allow.
var routedMethods = []string{http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete}

// allowedMethods lists the methods some endpoint other than the catch-all
// takes for r's path. It runs only for requests no endpoint took.
func (s *Server) allowedMethods(r *http.Request) []string {
	var allow []string
	for _, m := range routedMethods {
		if m == r.Method {
			continue
		}
		probe := r.WithContext(r.Context()) // a shallow copy, to change the method of
		probe.Method = m
		if _, pattern := s.mux.Handler(probe); pattern != "" && pattern != "/" {
			allow = append(allow, m)
		}
	}
	return allow
}

// Handle adds a handler (for tenant endpoints owned by other packages). The
// operator endpoints are never mounted here: they live in internal/ops. It
// takes no API key, so nothing WrapAuthenticated adds runs for it, and its
// answers to requests with a body close the connection (closeUnreadBody).
func (s *Server) Handle(pattern string, h http.Handler) { s.mux.Handle(pattern, h) }

// WrapRoutes puts middleware around the API's routes, inside the request id,
// span, panic recovery and access log every request gets: what the
// middleware answers itself carries an X-Request-Id and is logged like any
// answer. It runs before routing and authentication, so it must not read a
// body (WrapAuthenticated is the place for that). Call it before serving.
func (s *Server) WrapRoutes(wrap func(http.Handler) http.Handler) { s.routes = wrap(s.routes) }

// WrapAuthenticated puts middleware between the check of the API key and each
// endpoint that takes one (after the owner's rate token is taken): it runs
// only for a valid key whose owner is within its rate, with the owner in
// context. The tenant listener reads a body there
// (internal/server), so a client without a valid key is answered 401 without
// its body being read, while what the middleware answers itself (a body too
// slow or unreadable) has the request id, the access-log line with the owner
// and the endpoint's metrics label of any answer. Call it before serving.
func (s *Server) WrapAuthenticated(wrap func(http.Handler) http.Handler) {
	for _, route := range s.keyed {
		route.next = wrap(route.next)
	}
}

// ServeHTTP serves the API with panic recovery and access logs.
// Every request gets a request id (X-Request-Id), a server span continuing the
// caller's traceparent, and one access log line at info level (with the job's
// id when the request created or found one: the per-job lines are at debug).
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	// HTTP/2 ends an unread body with its stream (closeUnreadBody).
	info := &requestInfo{id: requestID(r), unreadBody: r.ProtoMajor == 1 && r.ContentLength != 0}
	rid := info.id
	w.Header().Set(RequestIDHeader, rid)
	r, span := startRequestSpan(r, info)
	sw := &statusWriter{ResponseWriter: w, status: http.StatusOK, info: info}
	defer func() {
		if v := recover(); v != nil {
			s.Log.Error("panic serving request", loggedMethod(r.Method), loggedPath(r.URL.Path), "request_id", rid, "panic", v, "stack", string(debug.Stack()))
			if sw.wrote && isEventStream(sw.Header()) {
				// A stream's 200 and SSE headers are out: a problem+json body
				// would be read as a broken event. The failure goes as the
				// stream's error event, as the chat endpoint's own errors do
				// (streamChat), with no [DONE] after it.
				writeInternalEvent(r.Context(), sw)
			} else if OpenAIShaped(r.URL.Path) {
				// The OpenAI-compatible endpoints answer in OpenAI's error
				// shape (docs/chat.md: 500 internal), which the SDKs decode:
				// go-openai reads a problem+json body as an error with no
				// message. chatResend words the advice for a caller with a
				// key and one without (an X-Should-Retry: false the chat
				// handler set before the panic stays on the answer).
				writeOpenAIError(sw, http.StatusInternalServerError, "server_error", "internal", "",
					"the router failed unexpectedly"+chatResend)
			} else {
				writeProblem(sw, r, problem{Status: http.StatusInternalServerError, Type: "internal", Title: "Internal error",
					Detail: "the router failed unexpectedly; the request may be retried with the same Idempotency-Key"})
			}
		}
		if !sw.wrote && r.Context().Err() != nil {
			// The handler answered nothing because the caller had left
			// (hung up, or gave up on a long-poll or a chat call): net/http
			// would put its implicit 200 on a closed connection.
			sw.status = statusClientClosed
			if cutAtShutdown(r) {
				sw.status = http.StatusServiceUnavailable // the router cut it (ErrCutAtShutdown), not its caller
			}
		}
		// A stream that ended with an error event is counted, logged and
		// traced with that error's status (a streamed upstream_failed is a
		// 502 to the operator), though its wire status is the 200 its
		// headers sent first.
		status := sw.status
		if info.errorStatus != 0 {
			status = info.errorStatus
		}
		endRequestSpan(span, r, sw.status, status)
		if s.served != nil {
			pattern := r.Pattern // set by the mux
			if pattern == "" {
				_, pattern = s.mux.Handler(r) // answered before the mux (by what WrapRoutes added)
			}
			s.served.RequestServed(r.Method, pattern, status, time.Since(start))
		}
		if !s.Log.Enabled(r.Context(), slog.LevelInfo) {
			return
		}
		// The record is made here, with no caller's PC: Logger.LogAttrs takes
		// one with runtime.Callers for every record (0.8% of the router's CPU
		// per job), and an access line's source would always be this line.
		rec := slog.NewRecord(time.Now(), slog.LevelInfo, "http", 0)
		rec.AddAttrs(loggedMethod(r.Method), loggedPath(r.URL.Path), slog.Int("status", status),
			slog.Int64("ms", time.Since(start).Milliseconds()), slog.String("request_id", rid))
		if status != sw.status {
			rec.AddAttrs(slog.Int("wire_status", sw.status)) // the stream's 200, its error in an event
		}
		if info.writeFailed.Load() {
			rec.AddAttrs(slog.Bool("caller_left", true)) // the answer was cut: the status is what its headers said
		}
		if info.owner != "" {
			rec.AddAttrs(slog.String("owner", info.owner))
		}
		if id := sw.Header().Get("X-Router-Job-Id"); id != "" {
			rec.AddAttrs(slog.String("job_id", id))
		}
		if sc := span.SpanContext(); sc.IsValid() {
			rec.AddAttrs(slog.String("trace_id", sc.TraceID().String()))
		}
		_ = s.Log.Handler().Handle(r.Context(), rec)
	}()
	s.routes.ServeHTTP(sw, r)
}

// statusClientClosed is the status a request is counted (metrics'
// router_http_requests_total) and logged with when its caller left before
// anything was answered: nginx's 499 "client closed request". No response
// carries it.
const statusClientClosed = 499

type statusWriter struct {
	http.ResponseWriter
	status int
	info   *requestInfo
	wrote  bool // the header was written
}

func (w *statusWriter) WriteHeader(code int) {
	if !w.wrote && w.info.unreadBody {
		closeUnreadBody(w.ResponseWriter)
	}
	w.wrote = true
	w.status = code
	w.ResponseWriter.WriteHeader(code)
}

// Write writes the header first when the handler did not (net/http would
// write its 200 itself, out of WriteHeader's sight: an answer to a request
// whose body no endpoint took must still close the connection).
func (w *statusWriter) Write(b []byte) (int, error) {
	if !w.wrote {
		w.WriteHeader(http.StatusOK)
	}
	n, err := w.ResponseWriter.Write(b)
	if err != nil {
		w.info.writeFailed.Store(true)
	}
	return n, err
}

func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

func (s *Server) healthz(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
}

func (s *Server) readyz(w http.ResponseWriter, r *http.Request) {
	if s.draining() {
		// Shutting down: a load balancer polling readiness stops sending new
		// requests here; other replicas take them.
		writeProblem(w, r, problem{Status: http.StatusServiceUnavailable, Type: "not-ready", Title: "Draining",
			Detail: "this replica is shutting down (SIGTERM): send requests to another replica"})
		return
	}
	// Uncounted: router_db_* count the jobs' work (docs/operations.md), and a
	// load balancer's probes every few seconds would be a quiet replica's
	// whole "database work per settled job".
	ctx, cancel := context.WithTimeout(metrics.Uncounted(r.Context()), 2*time.Second)
	defer cancel()
	if err := s.Store.Ping(ctx); err != nil {
		if errors.Is(err, store.ErrReadOnly) {
			s.Log.Warn("readiness: the database accepts no writes", "err", err, "request_id", RequestID(r.Context()))
			writeProblem(w, r, problem{Status: http.StatusServiceUnavailable, Type: "not-ready", Title: "Database read-only",
				Detail: "the database answers but accepts no writes (a standby, or default_transaction_read_only = on); " +
					"the router's log has the cause"})
			return
		}
		s.databaseNotReady(w, r, "readiness: the database does not answer", err)
		return
	}
	ok, err := s.migrationsCurrent(ctx)
	if err != nil {
		// A connection lost between the ping and this read: the database,
		// not the migrations.
		s.databaseNotReady(w, r, "readiness: could not read the applied migrations", err)
		return
	}
	if !ok {
		writeProblem(w, r, problem{Status: http.StatusServiceUnavailable, Type: "not-ready", Title: "Migrations pending",
			Detail: "migrations are not current: run `router migrate`"})
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"status": "ready"})
}

// migrationsCurrent is Store.MigrationsCurrent, read until it first says
// true and remembered from then on (see Server.migrated); one probe at a time
// reads it, the others waiting (or giving up with ctx) take its answer when
// it is true, or read it themselves after it when it was not.
func (s *Server) migrationsCurrent(ctx context.Context) (bool, error) {
	if s.migrated.Load() {
		return true, nil
	}
	select {
	case s.migrating <- struct{}{}:
	case <-ctx.Done():
		return false, context.Cause(ctx)
	}
	defer func() { <-s.migrating }()
	if s.migrated.Load() {
		return true, nil
	}
	ok, err := s.Store.MigrationsCurrent(ctx)
	if ok && err == nil {
		s.migrated.Store(true)
	}
	return ok, err
}

// databaseNotReady answers readiness when the database fails: the cause
// (hosts, users, database names) is the operator's, in the log; readiness is
// answered to anyone who asks.
func (s *Server) databaseNotReady(w http.ResponseWriter, r *http.Request, msg string, err error) {
	s.Log.Warn(msg, "err", err, "request_id", RequestID(r.Context()))
	writeProblem(w, r, problem{Status: http.StatusServiceUnavailable, Type: "not-ready", Title: "Database unreachable",
		Detail: "the database does not answer; the router's log has the cause"})
}
