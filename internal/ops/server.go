// Package ops owns the router's operator surface (SPEC §17): GET /dashboard,
// GET /metrics, GET /v1/providers and GET /v1/conformance, served on their own
// listener (`ops_listen`) and never on the tenant API's. It authenticates with
// one operator key when one is configured.
//
// It only reads: breaker state, conformance results, recent jobs and counters
// through internal/store, metrics through the handler it is given.
package ops

import (
	"crypto/sha256"
	"crypto/subtle"
	"log/slog"
	"net/http"
	"runtime/debug"
	"strings"

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
}

// New builds the operator surface. prompts may be nil (conformance results then
// do not say whether their prompt version is the loaded one).
func New(cfg Config, st *store.Store, prompts *prompt.Set, log *slog.Logger) *Server {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	s := &Server{cfg: cfg.withDefaults(), store: st, prompts: prompts, log: log, mux: http.NewServeMux()}
	s.mux.Handle("GET /dashboard", s.dashboard())
	s.mux.Handle("GET /v1/providers", s.providers())
	s.mux.HandleFunc("GET /v1/conformance", s.listConformance)
	if cfg.Metrics != nil {
		s.mux.Handle("GET /metrics", cfg.Metrics)
	}
	s.mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		problem.Write(w, r, problem.Details{Status: http.StatusNotFound, Type: "not-found", Title: "No such endpoint",
			Detail: r.Method + " " + r.URL.Path + " is not an operator endpoint; this listener serves /dashboard, /metrics, /v1/providers and /v1/conformance (see docs/operations.md)"})
	})
	return s
}

// ServeHTTP checks the operator key, when one is configured, and serves the
// endpoint with panic recovery.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	defer func() {
		if v := recover(); v != nil {
			s.log.Error("panic serving operator request", "path", r.URL.Path, "panic", v, "stack", string(debug.Stack()))
			problem.Write(w, r, problem.Details{Status: http.StatusInternalServerError, Type: "internal", Title: "Internal error",
				Detail: "the operator endpoint failed unexpectedly; retry"})
		}
	}()
	if s.cfg.Key != "" && !s.keyOK(r) {
		w.Header().Set("WWW-Authenticate", `Bearer realm="router-ops"`)
		problem.Write(w, r, problem.Details{Status: http.StatusUnauthorized, Type: "unauthenticated", Title: "Missing or wrong operator key",
			Detail: "the operator surface needs the operator key (the value of the environment variable named by ops_key_env) as 'Authorization: Bearer <key>'; tenant API keys are not accepted here"})
		return
	}
	s.mux.ServeHTTP(w, r)
}

// keyOK: the request carries the operator key (the scheme is case-insensitive,
// RFC 9110 §11.1).
func (s *Server) keyOK(r *http.Request) bool {
	scheme, key, ok := strings.Cut(strings.TrimSpace(r.Header.Get("Authorization")), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return false
	}
	// As SHA-256 digests: ConstantTimeCompare returns at once on different
	// lengths, which would tell a prober the operator key's length.
	given, want := sha256.Sum256([]byte(strings.TrimSpace(key))), sha256.Sum256([]byte(s.cfg.Key))
	return s.cfg.Key != "" && subtle.ConstantTimeCompare(given[:], want[:]) == 1
}
