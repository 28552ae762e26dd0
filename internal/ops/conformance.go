package ops

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/routerhq/router/internal/problem"
	"github.com/routerhq/router/internal/prompt"
	"github.com/routerhq/router/internal/store"
)

// conformanceResult is one entry of GET /v1/conformance.
type conformanceResult struct {
	store.ConformanceRun
	// Current: the run is of the prompt version this router has loaded, with
	// the model the target sends now and against the prompt content loaded
	// now (a run recorded without a digest counts for any). Other results do
	// not count for routing.
	Current *bool `json:"current,omitempty"`
	// Fresh: the last pass (last_pass_at) is younger than conformance.max_age
	// on the database clock, by the gate's own rule, and the run is of the
	// model and prompt content of now. The gate admits the provider on this
	// prompt version only when passed and fresh are both true.
	Fresh bool `json:"fresh"`
	// Reason says why the run does not count now although of this version:
	// another model, or the prompt changed since.
	Reason string `json:"reason,omitempty"`
}

// runJudge says how a stored run counts now, by the conformance gate's rules
// (conformance.Gate): only a run of the model the target sends (the prompt's
// model, else the target's) and of the prompt content loaded now counts.
type runJudge struct {
	prompts *prompt.Set                // nil: no prompt is loaded (current is never true)
	modelOf func(target string) string // nil: runs of any model count
}

// runVerdict is a run judged by runJudge.
type runVerdict struct {
	current bool   // the loaded version, of the model the target sends and the loaded content
	fresh   bool   // the run's own freshness (store), when it is of the model and content
	ofModel bool   // the run is of the model the target sends now (or that is not known)
	why     string // why the run does not count: another model, or another content
}

func (j runJudge) judge(r store.ConformanceRun) runVerdict {
	var p *prompt.Prompt
	if j.prompts != nil {
		p, _ = j.prompts.Get(r.Prompt, "")
	}
	loaded := p != nil && p.Version == r.PromptVersion
	want := ""
	switch {
	case p != nil && p.Model != "":
		want = p.Model
	case j.modelOf != nil:
		want = j.modelOf(r.Provider)
	}
	rerun := fmt.Sprintf("`router conformance run --provider %s --prompt %s`", r.Provider, r.Prompt)
	v := runVerdict{ofModel: want == "" || r.Model == want}
	switch {
	case !v.ofModel:
		ran := "ran"
		if r.Passed {
			ran = "passed"
		}
		v.why = fmt.Sprintf("it %s with model %s; the target now sends %s: run %s", ran, r.Model, want, rerun)
	case loaded && !store.SamePromptContent(r.PromptDigest, p.Digest):
		v.why = fmt.Sprintf("the prompt %s changed since this run; bump its version or rerun %s", p.ID(), rerun)
	default:
		v.current, v.fresh = loaded, r.Fresh
	}
	return v
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
	j := runJudge{prompts: s.prompts, modelOf: s.cfg.TargetModels}
	out := make([]conformanceResult, len(runs))
	for i, run := range runs {
		v := j.judge(run)
		out[i].ConformanceRun, out[i].Fresh, out[i].Reason = run, v.fresh, v.why
		if s.prompts != nil {
			out[i].Current = &v.current
		}
	}
	writeJSON(w, http.StatusOK, map[string]any{"results": out, "max_age": s.cfg.ConformanceMaxAge.String()})
}
