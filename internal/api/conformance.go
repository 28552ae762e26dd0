package api

import (
	"net/http"
	"strconv"

	"github.com/routerhq/router/internal/store"
)

// conformanceResult is one entry of GET /v1/conformance.
type conformanceResult struct {
	store.ConformanceRun
	// Current: the prompt version is the one this router has loaded. Results of
	// other versions do not count for routing.
	Current *bool `json:"current,omitempty"`
}

// ListConformance serves GET /v1/conformance: for every provider × prompt
// version with a conformance run, its latest run (passed, cases passed of total,
// started and finished on the database clock, router version) and when it last
// passed. Query parameters: provider and prompt filter; details=true adds the
// per-case details. Conformance concerns the router's providers, not an owner's
// data: any valid API key may read it.
//
// It authenticates the request itself (like every /v1 endpoint), so it can be
// registered bare or wrapped by authed.
func (s *Server) ListConformance(w http.ResponseWriter, r *http.Request) {
	if ownerFrom(r.Context()) == "" {
		s.authed(s.listConformance)(w, r)
		return
	}
	s.listConformance(w, r)
}

func (s *Server) listConformance(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	details := false
	if v := q.Get("details"); v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			writeProblem(w, r, problem{Status: http.StatusBadRequest, Type: "invalid-query", Title: "Invalid query parameter",
				Detail: "details must be true or false, got " + strconv.Quote(v)})
			return
		}
		details = b
	}
	runs, err := s.Store.LatestConformanceRuns(r.Context(), store.ConformanceFilter{
		Provider: q.Get("provider"), Prompt: q.Get("prompt"), WithCases: details,
	})
	if err != nil {
		s.Log.Error("reading conformance results failed", "err", err)
		writeProblem(w, r, problem{Status: http.StatusServiceUnavailable, Type: "unavailable", Title: "Cannot read conformance results",
			Detail: "the router could not read its database; retry shortly"})
		return
	}
	out := make([]conformanceResult, len(runs))
	for i, run := range runs {
		out[i].ConformanceRun = run
		if s.Prompts != nil {
			p, err := s.Prompts.Get(run.Prompt, "")
			cur := err == nil && p.Version == run.PromptVersion
			out[i].Current = &cur
		}
	}
	writeJSON(w, http.StatusOK, map[string]any{"results": out})
}
