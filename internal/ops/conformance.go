package ops

import (
	"net/http"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/routerhq/router/internal/problem"
	"github.com/routerhq/router/internal/store"
)

// conformanceResult is one entry of GET /v1/conformance.
type conformanceResult struct {
	store.ConformanceRun
	// Current: the prompt version is the one this router has loaded. Results of
	// other versions do not count for routing.
	Current *bool `json:"current,omitempty"`
	// Fresh: the last pass (last_pass_at) is younger than conformance.max_age
	// on the database clock, by the gate's own rule. The gate admits the
	// provider on this prompt version only when passed and fresh are both true.
	Fresh bool `json:"fresh"`
}

// listConformance serves GET /v1/conformance: for every provider × prompt
// version with a conformance run, its latest run (passed, cases passed of total,
// started and finished on the database clock, router version), when it last
// passed and whether that pass is fresh (younger than conformance.max_age, on
// the database clock), with max_age beside the results. Query parameters: provider and prompt filter; details=true adds the
// per-case details.
func (s *Server) listConformance(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	for _, name := range []string{"provider", "prompt"} {
		// PostgreSQL cannot compare text that is not UTF-8 or holds a NUL:
		// such a filter is the caller's mistake (400), not the database
		// failing (503, "retry").
		if v := q.Get(name); !utf8.ValidString(v) || strings.IndexByte(v, 0) >= 0 {
			problem.Write(w, r, problem.Details{Status: http.StatusBadRequest, Type: "invalid-query", Title: "Invalid query parameter",
				Detail: name + " must be UTF-8 text without NUL characters (a provider or prompt name, percent-encoded)"})
			return
		}
	}
	details := false
	if v := q.Get("details"); v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			problem.Write(w, r, problem.Details{Status: http.StatusBadRequest, Type: "invalid-query", Title: "Invalid query parameter",
				Detail: "details must be true or false, got " + strconv.Quote(v)})
			return
		}
		details = b
	}
	runs, err := s.store.LatestConformanceRuns(r.Context(), store.ConformanceFilter{
		Provider: q.Get("provider"), Prompt: q.Get("prompt"), WithCases: details, MaxAge: s.cfg.ConformanceMaxAge,
	})
	if err != nil {
		s.log.Error("reading conformance results failed", "err", err)
		problem.Write(w, r, problem.Details{Status: http.StatusServiceUnavailable, Type: "unavailable", Title: "Cannot read conformance results",
			Detail: "the router could not read its database; retry shortly"})
		return
	}
	out := make([]conformanceResult, len(runs))
	for i, run := range runs {
		out[i].ConformanceRun, out[i].Fresh = run, run.Fresh
		if s.prompts != nil {
			p, err := s.prompts.Get(run.Prompt, "")
			cur := err == nil && p.Version == run.PromptVersion
			out[i].Current = &cur
		}
	}
	writeJSON(w, http.StatusOK, map[string]any{"results": out, "max_age": s.cfg.ConformanceMaxAge.String()})
}
