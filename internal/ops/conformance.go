package ops

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/routerhq/router/conformance"
	"github.com/routerhq/router/internal/problem"
	"github.com/routerhq/router/internal/prompt"
	"github.com/routerhq/router/internal/store"
)

// conformanceResult is one entry of GET /v1/conformance.
type conformanceResult struct {
	store.ConformanceRun
	// Current: the run is of the prompt version this router has loaded, with
	// a model the target may be asked for now (the one it sends for the
	// prompt, or a chat route's, see runJudge.models) and against the prompt
	// content loaded now (a legacy run, recorded before migration 0028
	// without a digest, counts for any), on the target's settings of now (its
	// type, base_url and request settings: conformance.TargetDigest; a legacy
	// run without one counts for any).
	// Other results do not count for routing.
	Current *bool `json:"current,omitempty"`
	// Fresh: the last pass (last_pass_at) is younger than conformance.max_age
	// on the database clock, by the gate's own rule, and the run is of the
	// prompt version loaded now, of a model the target may be asked for, of
	// the prompt content of now and on the target's settings of now. The
	// gate admits the provider on this prompt version, for that model, only
	// when passed and fresh are both true.
	Fresh bool `json:"fresh"`
	// Reason says why the run does not count now although of this version:
	// another model, the prompt changed since, or the target's endpoint or
	// request settings changed since.
	Reason string `json:"reason,omitempty"`
}

// runJudge says how a stored run counts now, by the conformance gate's rules
// (conformance.Gate): only a run of a model the target may be asked for on
// the run's prompt (runJudge.models), of the prompt content loaded now and
// on the target's settings of now counts.
type runJudge struct {
	prompts *prompt.Set                // nil: no prompt is loaded (current is never true)
	modelOf func(target string) string // nil: runs of any model count, unless the prompt names one
	// routes are the chat routes gated by a conformance_prompt
	// (conformance.ChatRoute): their models are asked of their targets too.
	routes []conformance.ChatRoute
	// digestOf is each target's settings digest for a model
	// (conformance.TargetDigests), as the gate is told it
	// (conformance.TargetSettings); nil: runs on any settings count.
	digestOf func(target, model string, ownMaxTokens bool) string
}

// runVerdict is a run judged by runJudge.
type runVerdict struct {
	current bool   // the loaded version, of a model the target may be asked for and the loaded content
	fresh   bool   // the run's own freshness (store), when it is current (or no prompt set is given)
	own     bool   // the run is of the model the target sends for the prompt itself (or that is not known)
	ofModel bool   // the run is of a model the target may be asked for: its own, or a chat route's
	why     string // why the run does not count: another model, another content, other target settings
	short   string // why in a few words: "other model", "prompt changed" or "target changed" ("" when it counts)
}

// models is what `router conformance run` tests target with on prompt p
// (conformance.Run and its chat alias runs), so what the gate may be asked
// about: own, the model a prompt job sends (the prompt's, else the target's;
// "" when not known), then, for each chat route gated by p with the target
// among its targets, the target's own model (a chat completion naming no
// alias sends it, which differs from own when the prompt names a model) and
// the route's models (the aliases a chat completion may name).
func (j runJudge) models(target string, p *prompt.Prompt) (own string, others []string) {
	if p.Model != "" {
		own = p.Model
	} else if j.modelOf != nil {
		own = j.modelOf(target)
	}
	add := func(m string) {
		if m != "" && m != own && !slices.Contains(others, m) {
			others = append(others, m)
		}
	}
	targetModel := ""
	if j.modelOf != nil {
		targetModel = j.modelOf(target)
	}
	for _, cr := range j.routes {
		if cr.Prompt != p.Name {
			continue
		}
		for _, m := range cr.ModelsOn(target, targetModel) {
			add(m)
		}
	}
	return own, others
}

func (j runJudge) judge(r store.ConformanceRun) runVerdict {
	var p *prompt.Prompt
	if j.prompts != nil {
		p, _ = j.prompts.Get(r.Prompt, "")
	}
	loaded := p != nil && p.Version == r.PromptVersion
	var ofRun *prompt.Prompt // the run's prompt version, when loaded (nil: its max_tokens is not known)
	if loaded {
		ofRun = p
	}
	want, others := "", []string(nil)
	switch {
	case p != nil:
		want, others = j.models(r.Provider, p)
	case j.modelOf != nil:
		want = j.modelOf(r.Provider)
	}
	rerun := fmt.Sprintf("`router conformance run --provider %s --prompt %s`", r.Provider, r.Prompt)
	v := runVerdict{own: want == "" || r.Model == want}
	v.ofModel = v.own || slices.Contains(others, r.Model)
	switch {
	case !v.ofModel:
		ran := "ran"
		if r.Passed {
			ran = "passed"
		}
		sends := want
		if len(others) > 0 {
			sends += " (and, asked by a chat completion, " + strings.Join(others, ", ") + ")"
		}
		v.why = fmt.Sprintf("it %s with model %s; the target now sends %s: run %s", ran, r.Model, sends, rerun)
		v.short = "other model"
	case loaded && !p.SameContent(r.PromptDigest):
		v.why = fmt.Sprintf("the prompt %s changed since this run; bump its version or rerun %s", p.ID(), rerun)
		v.short = "prompt changed"
	case !conformance.SameTarget(j.digestOf, r.TargetDigest, r.Provider, r.Model, ofRun):
		v.why = fmt.Sprintf("the endpoint or settings of target %s changed since this run (its provider's type, base_url or request settings); run %s",
			r.Provider, rerun)
		v.short = "target changed"
	default:
		// A pass of a version not loaded now is not one the gate admits
		// (it judges the loaded version only), so it is not shown fresh;
		// without a prompt set (j.prompts nil, current left out) the
		// store's freshness is all there is to say.
		v.current, v.fresh = loaded, r.Fresh && (loaded || j.prompts == nil)
	}
	return v
}

// conformanceParams are the query parameters GET /v1/conformance takes
// (checkQuery refuses others).
var conformanceParams = []string{"provider", "prompt", "details"}

// listConformance serves GET /v1/conformance: for every provider × prompt
// version with a conformance run, its latest run (passed, cases passed of total,
// started and finished on the database clock, router version), when it last
// passed and whether that pass is fresh (younger than conformance.max_age, on
// the database clock), with max_age beside the results. Query parameters
// (conformanceParams): provider and prompt filter; details=true adds the
// per-case details.
func (s *Server) listConformance(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	for _, name := range []string{"provider", "prompt"} {
		// Given but naming nothing (`?provider=$P` with $P unset): read as
		// no filter, it would answer every provider's results to a check
		// of one (checkQuery has made each parameter single).
		if vs, given := q[name]; given && strings.TrimSpace(vs[0]) == "" {
			problem.Write(w, r, problem.Details{Status: http.StatusBadRequest, Type: "invalid-query", Title: "Invalid query parameter",
				Detail: name + " is given but empty: name a " + name + " (percent-encoded), or leave the parameter out to list every " + name + "'s results"})
			return
		}
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
	if _, given := q["details"]; given { // `details=` too: said, not read as false
		v := q.Get("details")
		b, err := strconv.ParseBool(v)
		if err != nil {
			problem.Write(w, r, problem.Details{Status: http.StatusBadRequest, Type: "invalid-query", Title: "Invalid query parameter",
				Detail: "details must be true or false, got " + strconv.Quote(problem.Clip(v))})
			return
		}
		details = b
	}
	ctx, cancel := context.WithTimeout(r.Context(), opsReadTimeout)
	defer cancel()
	var runs []store.ConformanceRun
	var err error
	for _, id := range s.conformanceTargets(q.Get("provider")) {
		var got []store.ConformanceRun
		got, err = s.store.LatestConformanceRuns(ctx, store.ConformanceFilter{
			Provider: id, Prompt: q.Get("prompt"), WithCases: details, MaxAge: s.cfg.ConformanceMaxAge,
		})
		if err != nil {
			break
		}
		runs = append(runs, got...)
	}
	if err != nil {
		s.log.Error("reading conformance results failed", "err", err)
		problem.Write(w, r, problem.Details{Status: http.StatusServiceUnavailable, Type: "unavailable", Title: "Cannot read conformance results",
			Detail: "the router could not read its database; retry shortly"})
		return
	}
	j := runJudge{prompts: s.prompts, modelOf: s.cfg.TargetModels, routes: s.cfg.ChatRoutes, digestOf: s.cfg.TargetDigests}
	writeJSON(w, http.StatusOK, map[string]any{"results": j.results(runs), "max_age": s.cfg.ConformanceMaxAge.String()})
}

// conformanceTargets is the target ids whose runs GET /v1/conformance's
// provider filter (name; "" for none) lists, by `router conformance run
// --provider`'s rule: a target id is itself; a provider with no model of its
// own, which no target is named after (its runs are stored under
// name/<model>), is every route target of it, in id order; name/<its own
// model> is the target name. Anything else is filtered as given (and lists
// nothing). Each id is one read: the filter is exact in the database.
func (s *Server) conformanceTargets(name string) []string {
	if name == "" || slices.Contains(s.cfg.Providers, name) {
		return []string{name}
	}
	var ids []string
	for _, r := range s.cfg.GateRoutes {
		for _, id := range r.Targets {
			if strings.HasPrefix(id, name+"/") && !slices.Contains(ids, id) {
				ids = append(ids, id)
			}
		}
	}
	if len(ids) > 0 {
		slices.Sort(ids) // the database's order, by provider
		return ids
	}
	if p, model, ok := strings.Cut(name, "/"); ok && model != "" && s.cfg.TargetModels != nil &&
		slices.Contains(s.cfg.Providers, p) && s.cfg.TargetModels(p) == model {
		return []string{p}
	}
	return []string{name}
}

// results are the entries of GET /v1/conformance for runs, judged by j.
func (j runJudge) results(runs []store.ConformanceRun) []conformanceResult {
	out := make([]conformanceResult, len(runs))
	for i, run := range runs {
		v := j.judge(run)
		out[i].ConformanceRun, out[i].Fresh, out[i].Reason = run, v.fresh, v.why
		if j.prompts != nil {
			out[i].Current = &v.current
		}
	}
	return out
}
