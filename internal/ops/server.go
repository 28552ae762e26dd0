// Package ops owns the router's operator surface (SPEC §17): GET /dashboard,
// GET /metrics, GET /v1/providers and GET /v1/conformance, served on their own
// listener (`ops_listen`) and never on the tenant API's. It authenticates with
// one operator key when one is configured; without one (a loopback listener)
// it answers only requests addressed to a loopback host. It takes no request
// bodies.
//
// It only reads: breaker state, conformance results, recent jobs and counters
// through internal/store, metrics through the handler it is given. Its reads
// are not counted as the jobs' database work (metrics.Uncounted).
package ops

import (
	"crypto/sha256"
	"crypto/subtle"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/routerhq/router/internal/metrics"
	"github.com/routerhq/router/internal/problem"
	"github.com/routerhq/router/internal/prompt"
	"github.com/routerhq/router/internal/store"
)

// Server serves the operator endpoints.
type Server struct {
	cfg     Config
	store   *store.Store
	prompts *prompt.Set
	log     *slog.Logger
	mux     *http.ServeMux
	// key is the operator key as compared (Config.Key without surrounding
	// white space); "" with a Config.Key set refuses every request.
	key string
	// paths are the operator endpoints' paths, in the order 404s list them;
	// each answers GET and HEAD only (a 405 otherwise).
	paths []string
	// now is this process's clock (time.Now; a test skews it). The
	// dashboard shows it as the time the page was generated, and measures
	// no age with it: the rows' timestamps are on the database's clock.
	now func() time.Time
}

// New builds the operator surface. prompts may be nil (conformance results then
// do not say whether their prompt version is the loaded one).
func New(cfg Config, st *store.Store, prompts *prompt.Set, log *slog.Logger) *Server {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	s := &Server{cfg: cfg.withDefaults(), store: st, prompts: prompts, log: log, mux: http.NewServeMux(), key: operatorKey(cfg.Key), now: time.Now}
	if cfg.Key != "" && s.key == "" {
		log.Error("the operator key is only white space: every operator request is refused; set the variable named by ops_key_env to the key")
	}
	// The dashboard reloads itself by a meta refresh of its own URL: it
	// takes no parameter either.
	s.route("/dashboard", s.dashboard())
	if cfg.Metrics != nil {
		// Not checked: a scraper may send parameters of its own (Prometheus'
		// params:, a federation's match[]), which the handler ignores.
		s.mux.Handle("GET /metrics", cfg.Metrics)
		s.paths = append(s.paths, "/metrics")
	}
	s.route("/v1/providers", s.providers())
	s.route("/v1/conformance", http.HandlerFunc(s.listConformance), conformanceParams...)
	s.mux.HandleFunc("/", s.noRoute)
	return s
}

// opsMethods are the methods every operator endpoint answers (a GET pattern
// of http.ServeMux takes HEAD too).
const opsMethods = "GET, HEAD"

// route serves GET path with h, refusing any query parameter but params
// (checkQuery).
func (s *Server) route(path string, h http.Handler, params ...string) {
	s.paths = append(s.paths, path)
	s.mux.Handle("GET "+path, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if checkQuery(w, r, path, params) {
			h.ServeHTTP(w, r)
		}
	}))
}

// noRoute answers what no endpoint took: a 405 naming the allowed methods
// for an operator path asked with another method (POST /dashboard, OPTIONS),
// else a 404 listing the operator endpoints. The caller's method and path are
// quoted clipped (problem.Clip): this listener takes up to net/http's ~1 MiB
// of them.
func (s *Server) noRoute(w http.ResponseWriter, r *http.Request) {
	if slices.Contains(s.paths, r.URL.Path) {
		w.Header().Set("Allow", opsMethods)
		problem.Write(w, r, problem.Details{Status: http.StatusMethodNotAllowed, Type: "method-not-allowed", Title: "Method not allowed",
			Detail: problem.Clip(r.Method) + " is not allowed on " + r.URL.Path + "; it answers GET and HEAD only (the operator endpoints only read)"})
		return
	}
	n := len(s.paths)
	serves := strings.Join(s.paths[:n-1], ", ") + " and " + s.paths[n-1]
	problem.Write(w, r, problem.Details{Status: http.StatusNotFound, Type: "not-found", Title: "No such endpoint",
		Detail: problem.Clip(r.Method) + " " + problem.Clip(r.URL.Path) + " is not an operator endpoint; this listener serves " + serves + " (see docs/operations.md)"})
}

// checkQuery refuses, with a 400 naming them and the parameters the endpoint
// takes, a request to path whose query string cannot be decoded, names a
// parameter not in params (a typo such as ?providers=x would otherwise list
// everything, unfiltered) or gives one more than once (each takes one value).
// It reports whether the request may go on.
func checkQuery(w http.ResponseWriter, r *http.Request, path string, params []string) bool {
	if r.URL.RawQuery == "" {
		return true
	}
	takes := path + " takes no query parameter"
	if len(params) > 0 {
		takes = path + " takes " + strings.Join(params, ", ")
	}
	bad := func(title, detail string) bool {
		problem.Write(w, r, problem.Details{Status: http.StatusBadRequest, Type: "invalid-query", Title: title, Detail: detail})
		return false
	}
	// url.Values from r.URL.Query() drops the pairs it cannot decode, and a
	// filter dropped silently lists more than the caller asked for.
	q, err := url.ParseQuery(r.URL.RawQuery)
	if err != nil {
		return bad("Malformed query string", "the query string cannot be decoded ("+err.Error()+"); "+
			"percent-encode reserved characters in values and separate parameters with &; "+takes)
	}
	var unknown, repeated []string
	for name, vs := range q {
		switch {
		case !slices.Contains(params, name):
			unknown = append(unknown, strconv.Quote(problem.Clip(name)))
		case len(vs) > 1:
			repeated = append(repeated, name)
		}
	}
	if len(unknown) > 0 {
		slices.Sort(unknown)
		it := "it"
		if len(unknown) > 1 {
			it = "them"
		}
		return bad("Unknown query parameter", "GET "+path+" does not take "+strings.Join(unknown, ", ")+"; "+takes+". Remove or correct "+it+".")
	}
	if len(repeated) > 0 {
		slices.Sort(repeated)
		return bad("Repeated query parameter", strings.Join(repeated, ", ")+" given more than once; "+
			"each of "+strings.Join(params, ", ")+" takes one value. Send each once.")
	}
	return true
}

// ServeHTTP checks the request before any endpoint sees it — without an
// operator key, that it is addressed to a loopback host (LocalHost); with
// one, that it carries the key; and that it has no body, which no operator
// endpoint takes — then serves the endpoint with panic recovery. No body is
// ever read: a refused request with one has its connection closed
// (refuse), so a client the router has not let in cannot make it buffer or
// wait for a body.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	defer func() {
		if v := recover(); v != nil {
			s.log.Error("panic serving operator request", "path", r.URL.Path, "panic", v, "stack", string(debug.Stack()))
			problem.Write(w, r, problem.Details{Status: http.StatusInternalServerError, Type: "internal", Title: "Internal error",
				Detail: "the operator endpoint failed unexpectedly; retry"})
		}
	}()
	switch {
	case s.cfg.Key == "" && !LocalHost(r.Host):
		refuse(w, r, problem.Details{Status: http.StatusMisdirectedRequest, Type: "not-a-local-host", Title: "Host is not a loopback address",
			Detail: fmt.Sprintf("this operator listener has no operator key, so it answers only requests addressed to a loopback host "+
				"(127.0.0.1, [::1] or localhost, any port), not Host %q: a web page could otherwise read it through DNS rebinding. "+
				"Open it as http://127.0.0.1:<port>/…, have a proxy in front of it send such a Host, or set ops_key_env", problem.Clip(r.Host))})
	case s.cfg.Key != "" && len(r.Header.Values("Authorization")) > 1:
		// Which one counts is not agreed: a proxy or an audit log may take
		// the last where keyOK would take the first (as the tenant API,
		// internal/api's withOwner, refuses it).
		w.Header().Set("WWW-Authenticate", `Bearer realm="router-ops", error="invalid_request"`)
		refuse(w, r, problem.Details{Status: http.StatusUnauthorized, Type: "unauthenticated", Title: "More than one Authorization header",
			Detail: "the request has more than one Authorization header: send exactly one, 'Authorization: Bearer <operator key>' " +
				"or HTTP Basic authentication with the operator key as the password"})
	case s.cfg.Key != "" && !s.keyOK(r):
		// Basic first: a browser asks for it (the key as the password), and
		// offers no prompt for Bearer alone.
		w.Header().Add("WWW-Authenticate", `Basic realm="router-ops", charset="UTF-8"`)
		w.Header().Add("WWW-Authenticate", `Bearer realm="router-ops"`)
		refuse(w, r, problem.Details{Status: http.StatusUnauthorized, Type: "unauthenticated", Title: "Missing or wrong operator key",
			Detail: "the operator surface needs the operator key (the value of the environment variable named by ops_key_env) " +
				"as 'Authorization: Bearer <key>', or as the password of HTTP Basic authentication with any user name (what a browser asks for); " +
				"tenant API keys are not accepted here"})
	case hasBody(r):
		refuse(w, r, problem.Details{Status: http.StatusRequestEntityTooLarge, Type: "body-not-accepted", Title: "Request body not accepted",
			Detail: "the operator endpoints (GET /dashboard, /metrics, /v1/providers, /v1/conformance) take no request body; send the request without one"})
	default:
		// The endpoints' reads are the router's monitoring of itself, not a
		// job's database work: router_db_* does not count them (an open
		// dashboard would otherwise add to every job's round trips).
		s.mux.ServeHTTP(w, r.WithContext(metrics.Uncounted(r.Context())))
	}
}

// LocalHost reports whether a request's Host names a loopback address or
// localhost, with or without a port: what a browser sends for a page it
// loaded from this listener, and never for a page whose name a DNS rebinding
// pointed here. A listener without authentication answers only such requests
// (this surface without an operator key; `router serve --debug-listen`).
func LocalHost(host string) bool {
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	} else if strings.HasPrefix(host, "[") && strings.HasSuffix(host, "]") {
		host = host[1 : len(host)-1] // [::1] without a port
	}
	if strings.EqualFold(host, "localhost") || strings.EqualFold(host, "localhost.") {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.Zone() == "" && ip.Unmap().IsLoopback()
}

// hasBody reports whether a request comes with a body (a Content-Length
// above 0, or chunked).
func hasBody(r *http.Request) bool { return r.ContentLength != 0 }

// refuse answers a request refused before any endpoint took it. Its body, if
// it has one, is not read, and the connection is closed after the answer:
// kept open, net/http would first read the rest of the body (up to 256 KiB,
// for as long as the client takes) before it sent the answer's headers. The
// read deadline bounds what net/http still reads and discards after the answer
// (so that the close does not reset the connection before the client has
// read it) to unreadBodyGrace, as on the tenant listener (internal/api's
// closeUnreadBody).
func refuse(w http.ResponseWriter, r *http.Request, d problem.Details) {
	if hasBody(r) {
		w.Header().Set("Connection", "close")
		// A connection without deadlines (not HTTP/1 over TCP) refuses it.
		_ = http.NewResponseController(w).SetReadDeadline(time.Now().Add(unreadBodyGrace))
	}
	problem.Write(w, r, d)
}

// unreadBodyGrace is net/http's rstAvoidanceDelay (net/http/server.go): the
// time it gives a client to read an answer before closing a connection with
// input left unread.
const unreadBodyGrace = 500 * time.Millisecond

// operatorKey is the configured operator key as requests are compared with
// it: without surrounding white space. A key read from a file-made secret
// (an env file, a Kubernetes secret --from-file) often ends in a newline,
// which no Authorization header can carry, and keyOK trims what the client
// sends: kept, it made every operator request a 401.
func operatorKey(configured string) string { return strings.TrimSpace(configured) }

// keyOK: the request carries the operator key, as 'Authorization: Bearer
// <key>' or as the password of HTTP Basic authentication with any user name
// (RFC 7617: what a browser sends for the dashboard after its prompt). The
// scheme is case-insensitive (RFC 9110 §11.1). A request with more than one
// Authorization header is refused before (ServeHTTP).
func (s *Server) keyOK(r *http.Request) bool {
	var key string
	if _, password, ok := r.BasicAuth(); ok {
		// Trimmed as a Bearer key is: `curl -u x:"$(cat keyfile)"` keeps the
		// file's newline (the configured key is trimmed too, operatorKey).
		key = strings.TrimSpace(password)
	} else {
		scheme, bearer, ok := strings.Cut(strings.TrimSpace(r.Header.Get("Authorization")), " ")
		if !ok || !strings.EqualFold(scheme, "Bearer") {
			return false
		}
		key = strings.TrimSpace(bearer)
	}
	// As SHA-256 digests: ConstantTimeCompare returns at once on different
	// lengths, which would tell a prober the operator key's length.
	given, want := sha256.Sum256([]byte(key)), sha256.Sum256([]byte(s.key))
	return s.key != "" && subtle.ConstantTimeCompare(given[:], want[:]) == 1
}
