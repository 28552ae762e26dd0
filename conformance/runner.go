package conformance

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"runtime/debug"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/routerhq/router/internal/contract"
	"github.com/routerhq/router/internal/jsontext"
	"github.com/routerhq/router/internal/prompt"
	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/race"
	"github.com/routerhq/router/internal/store"
	"github.com/routerhq/router/internal/tokens"
)

// Stages at which a case can fail, in the order they run.
const (
	StageInput         = "input"          // the case's input fails the prompt's input schema
	StageRender        = "render"         // a message does not render completely
	StageTokenizer     = "tokenizer"      // lossy round trip, special tokens, unknown encoding
	StageContextWindow = "context_window" // prompt + max_tokens does not fit
	StageProvider      = "provider"       // the call failed
	StageContract      = "contract"       // schema or business rules
	StageExpect        = "expect"         // the case's expectations
)

// Options configure a run.
type Options struct {
	// Store records each provider × prompt result; nil records nothing.
	Store *store.Store
	// Targets are the configured providers by name (as cmd/router builds them
	// for the race runner).
	Targets map[string]*race.Target

	// Configured is every configured target by id, made as Targets are but
	// needing no adapter (only Model, ContextWindow, ProviderWindow,
	// Encoding and DefaultMaxTokens are read); nil: Targets. A case sent
	// with a model other than its target's own (a chat route's alias, a
	// prompt's model) is counted as routing counts it: as the target of the
	// same provider serving that model (race.TargetFor), with its window,
	// tokenizer and default max_tokens, which a --provider selection need
	// not include.
	Configured map[string]*race.Target

	Prompts *prompt.Set
	Suites  Suites
	// Providers and PromptNames select what runs; empty means all providers and
	// every loaded prompt. A named provider or prompt that does not exist, or a
	// named prompt without a suite, is an error.
	Providers   []string
	PromptNames []string
	// Concurrency bounds how many providers run at once (default 4). The cases
	// of one provider run one after another.
	Concurrency int
	// Temperature overrides the suites' temperature (which defaults to 0);
	// from 0 to 2. Each case's stored details record the one it used
	// (CaseResult.Sampling). Above MaxGateTemperature a result is
	// exploratory (Result.Exploratory): reported, not recorded.
	Temperature *float32
	// SuitesDir is the directory the suites were loaded from, for messages
	// (a prompt without a suite is told where to write it); also
	// Report.SuitesDir.
	SuitesDir string
	// TargetDigests, when set, is the settings digest of each target (by id)
	// asked for a model by requests that set their own max_tokens or not
	// (TargetDigest; TargetDigests makes it from the configuration), recorded
	// with each result: the gate counts a pass only for the settings it ran
	// against. nil records none (the pass then counts for any settings).
	TargetDigests func(target, model string, ownMaxTokens bool) string
	// RouterVersion is stored with each result; default Version().
	RouterVersion string
	// Gate is the configured conformance.gate (GateFallbacks, GateAll,
	// GateOff; "" is the default, fallbacks): the report says what the
	// results mean for routing under it (Report.Consequence).
	Gate string
	// Progress, when set, hears about every finished case (serialised).
	Progress func(Progress)
	// ChatRoutes are the chat routes whose raw chat completions a prompt's
	// results gate (routes.<name>.conformance_prompt) and that list model
	// aliases (routes.<name>.models). A chat completion naming an alias sends
	// it to every target of its route, and the gate then counts only a pass
	// of that model (Gate.AllowModel); so each selected target of such a
	// route also runs the route's prompt, when it is selected, once with each
	// alias, recorded under the target's id and the alias.
	ChatRoutes []ChatRoute
	// Stop, when set, ends a recording in flight at once (cmd/router passes
	// the context the second SIGTERM or Ctrl-C ends). A finished result is
	// still recorded after ctx ends (the first signal), within RecordTimeout,
	// unless Stop ends first.
	Stop context.Context
	// RecordTimeout bounds the recording of each result (default
	// DefaultRecordTimeout): a database that does not answer (a lock on
	// conformance_runs, a failover) leaves the result not recorded, with why,
	// instead of hanging the run.
	RecordTimeout time.Duration
	// Retry is the backoff between retries of a call on one target, as the
	// race runner's (cmd/router passes the configured execution.retry): a
	// Retry-After longer than MaxRetryAfter fails the case instead of
	// waiting. Zero fields take execution.retry's defaults (200ms, 5s, 30s).
	Retry race.Backoff
}

// DefaultRecordTimeout is Options.RecordTimeout's default.
const DefaultRecordTimeout = 10 * time.Second

// ChatRoute is a chat route whose model aliases are tested (Options.ChatRoutes).
type ChatRoute struct {
	Name    string   // the route's name, for messages
	Targets []string // its target ids, as in Options.Targets
	Prompt  string   // its conformance_prompt
	Models  []string // its models
}

// ModelsOn is the models a chat completion on the route may send to target,
// whose own model is own: own (a completion naming the route itself), then
// each of the route's models (a completion naming one). None when target is
// not on the route. The runs that test them and the operator views that
// count those runs both follow it, as the gate does.
func (cr ChatRoute) ModelsOn(target, own string) []string {
	if !slices.Contains(cr.Targets, target) {
		return nil
	}
	if own == "" {
		return cr.Models
	}
	return append([]string{own}, cr.Models...)
}

// Progress is one finished case.
type Progress struct {
	Provider, Prompt, Case string
	// Model is the model the case was sent to.
	Model       string
	Passed      bool
	Done, Total int // cases finished and planned, over the whole run
}

// Report is the outcome of a run.
type Report struct {
	RouterVersion string `json:"router_version"`
	// Passed: the run finished, every case of every result passed, every
	// result was recorded (a pass the gate does not have is not one: an
	// inconclusive or exploratory result is not) and every loaded prompt has
	// a suite.
	Passed bool `json:"passed"`
	// Interrupted: the run ended early (its context ended: Ctrl-C, a CI
	// timeout's SIGTERM). Results lists the provider × prompt results that
	// finished, and those cut short after a case had failed (Result.
	// Interrupted: failed, and recorded as such; a failure on a transient
	// provider error does not count); of the Planned others,
	// nothing ran to the end or was recorded, so the gate still judges them
	// by their previous runs.
	Interrupted bool `json:"interrupted,omitempty"`
	// Planned is how many provider × model × prompt results the run set out
	// to make.
	Planned int      `json:"planned_results"`
	Results []Result `json:"results"`
	// Unsuited lists loaded prompts (name@version) that have no suite: no
	// provider can become eligible for failover on them.
	Unsuited []string `json:"prompts_without_suite,omitempty"`
	// SuitesDir is where suites were looked for (for messages); set by callers.
	SuitesDir string `json:"-"`
	// Gate is the configured conformance.gate (Options.Gate): what the results
	// mean for routing depends on it.
	Gate string `json:"gate,omitempty"`
	// Rerun is the command that reruns the inconclusive results
	// (Result.Inconclusive); empty when there are none.
	Rerun string `json:"rerun,omitempty"`
}

// Result is one provider on one prompt version.
type Result struct {
	Provider      string       `json:"provider"`
	Model         string       `json:"model"`
	Prompt        string       `json:"prompt"`
	PromptVersion string       `json:"prompt_version"`
	PromptDigest  string       `json:"prompt_digest,omitempty"` // the prompt's content (prompt.Prompt.Digest), recorded with the run
	TargetDigest  string       `json:"target_digest,omitempty"` // the target's settings (TargetDigest), recorded with the run
	Passed        bool         `json:"passed"`
	CasesTotal    int          `json:"cases_total"`
	CasesPassed   int          `json:"cases_passed"`
	Cases         []CaseResult `json:"cases"`
	// Interrupted: the run was interrupted part-way through this pair after
	// one of its cases had already failed, so it failed whatever the rest
	// would have done; it is recorded as failed with the cases that finished
	// (Cases, fewer than CasesTotal). A pair interrupted before any case
	// failed is not a Result at all: an unfinished pair never records a pass.
	Interrupted bool `json:"interrupted,omitempty"`
	// Inconclusive: no case failed for a reason of the target's, but some
	// failed on a transient provider error (rate limited, unavailable or
	// overloaded, a refused or reset connection: transientError), so the pair proves
	// nothing either way, even when its other cases passed. It is not
	// recorded (Recorded stays absent): the gate keeps judging the target by
	// its previous runs, and a brief rate limit during a CI run does not
	// withdraw a valid pass. Passed is false and the run does not pass: rerun
	// it (Report.Rerun).
	Inconclusive bool `json:"inconclusive,omitempty"`
	// Exploratory: the pair ran at a temperature above MaxGateTemperature
	// (Temperature), which the gate does not count: it is reported, not
	// recorded (Recorded stays absent), and the run does not pass.
	Exploratory bool `json:"exploratory,omitempty"`
	// Temperature is the temperature the pair's requests asked for.
	Temperature float32 `json:"temperature"`
	DurationMS  int64   `json:"duration_ms"`
	// Recorded says whether the result was stored, where the gate reads it:
	// false when storing it failed (RecordError says why; the gate still
	// judges the provider by its previous run, so a pass here is not one the
	// gate has), absent when the run records nothing (Options.Store nil).
	Recorded    *bool  `json:"recorded,omitempty"`
	RecordError string `json:"record_error,omitempty"`
	// RunID, StartedAt and FinishedAt are the stored row's (database clock).
	RunID      int64      `json:"run_id,omitempty"`
	StartedAt  *time.Time `json:"started_at,omitempty"`
	FinishedAt *time.Time `json:"finished_at,omitempty"`
}

// ID is "prompt@version".
func (r *Result) ID() string { return r.Prompt + "@" + r.PromptVersion }

// NotRecorded reports whether storing the result failed: the gate does not
// have it.
func (r *Result) NotRecorded() bool { return r.Recorded != nil && !*r.Recorded }

// CaseResult is one case on one provider. It is stored as the run's per-case
// details.
type CaseResult struct {
	Name   string `json:"name"`
	Passed bool   `json:"passed"`
	// Stage is where the case failed (see the Stage constants); "" when it passed.
	Stage string `json:"stage,omitempty"`
	// Transient: the case failed its round trip on a transient provider
	// error (transientError); it says nothing of the target's conformance.
	Transient bool `json:"transient,omitempty"`
	// Failures name the rule and the JSON path (or the message field) of each
	// problem.
	Failures      []contract.Violation `json:"failures,omitempty"`
	Encoding      string               `json:"encoding,omitempty"`
	PromptTokens  int                  `json:"prompt_tokens,omitempty"`
	LatencyMS     int64                `json:"latency_ms,omitempty"`
	Usage         *providers.Usage     `json:"usage,omitempty"`
	ResponseModel string               `json:"response_model,omitempty"`
	// Sampling is what the case's request asked for besides its messages;
	// nil when the case failed before the round trip.
	Sampling *Sampling `json:"sampling,omitempty"`
	// Output is the reply of a failed case (shortened), to see what went wrong.
	Output string `json:"output,omitempty"`
}

// Sampling is the sampling settings of a case's request: the temperature the
// run used (Options.Temperature, else the suite's, else 0), and the prompt's
// max_tokens and seed. Stored with the run's per-case details, so a pass says
// at what temperature it was made.
type Sampling struct {
	Temperature float32 `json:"temperature"`
	MaxTokens   int     `json:"max_tokens,omitempty"`
	Seed        *int    `json:"seed,omitempty"`
}

// maxOutput bounds the reply kept with a failed case.
const maxOutput = 2000

// Version is the router's version as the Go build records it: the module
// version, or "devel", with the VCS revision when known.
func Version() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown"
	}
	v := bi.Main.Version
	if v == "" || v == "(devel)" {
		v = "devel"
	}
	var rev, dirty string
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			if s.Value == "true" {
				dirty = "-dirty"
			}
		}
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	if rev != "" && !strings.Contains(v, rev) {
		v += "+" + rev + dirty
	}
	return v
}

// plan is one provider's share of the run.
type plan struct {
	provider string
	target   *race.Target
	runs     []planRun
}

// planRun is one prompt's suite on one model.
type planRun struct {
	prompt *prompt.Prompt
	model  string
	alias  bool // a chat route's model alias, not the model the target or prompt sends
}

// has reports whether the plan already runs prompt p with model.
func (pl *plan) has(p *prompt.Prompt, model string) bool {
	for _, r := range pl.runs {
		if r.prompt == p && r.model == model {
			return true
		}
	}
	return false
}

// Run runs the selected suites against the selected providers, records each
// provider × prompt result in the store and returns the report. Report.Passed
// is false when any case failed, a result could not be recorded
// (Result.Recorded), a loaded prompt has no suite or the run did not finish
// (Report.Interrupted when ctx ended). An error means
// the run itself could not be made or recorded (bad selection, a suite that does
// not fit its prompt, the database, ctx ending); results finished before a
// recording error are still in the report.
func Run(ctx context.Context, opt Options) (*Report, error) {
	if opt.Prompts == nil {
		return nil, errors.New("conformance: no prompts loaded")
	}
	if opt.Concurrency <= 0 {
		opt.Concurrency = 4
	}
	if opt.RouterVersion == "" {
		opt.RouterVersion = Version()
	}
	opt.Retry = opt.Retry.WithDefaults()
	// Results is [] in JSON, never null, even when no result finished (a
	// run interrupted before its first): a consumer iterating it must not
	// have to test for null.
	rep := &Report{RouterVersion: opt.RouterVersion, Passed: true, Gate: opt.Gate, SuitesDir: opt.SuitesDir, Results: []Result{}}
	if t := opt.Temperature; t != nil && !(*t >= 0 && *t <= 2) { // NaN too
		return nil, fmt.Errorf("conformance: temperature %v is outside 0..2", *t)
	}

	names := unique(opt.Providers) // --provider a,a runs and records a once
	if len(names) == 0 {
		for n := range opt.Targets {
			names = append(names, n)
		}
		sort.Strings(names)
	}
	if len(names) == 0 {
		return nil, errors.New("conformance: no providers configured")
	}
	for _, n := range names {
		if _, ok := opt.Targets[n]; !ok {
			return nil, fmt.Errorf("conformance: no provider %q is configured (have: %s)", n, strings.Join(targetNames(opt.Targets), ", "))
		}
	}

	var selected []*prompt.Prompt
	if len(opt.PromptNames) == 0 {
		for _, p := range opt.Prompts.All() {
			if _, ok := opt.Suites[p.Name]; ok {
				selected = append(selected, p)
			} else {
				rep.Unsuited = append(rep.Unsuited, p.ID())
				rep.Passed = false
			}
		}
	} else {
		for _, n := range unique(opt.PromptNames) {
			p, err := opt.Prompts.Get(n, "")
			if err != nil {
				return nil, fmt.Errorf("conformance: %w", err)
			}
			if _, ok := opt.Suites[n]; !ok {
				where := n + "/" + SuiteFile
				if opt.SuitesDir != "" {
					where = filepath.Join(opt.SuitesDir, n, SuiteFile)
				}
				return nil, fmt.Errorf("conformance: prompt %s has no suite: write %s", p.ID(), where)
			}
			selected = append(selected, p)
		}
	}
	var suiteErrs []string
	for _, p := range selected {
		if err := opt.Suites[p.Name].Check(p); err != nil {
			suiteErrs = append(suiteErrs, err.Error())
		}
	}
	if len(suiteErrs) > 0 {
		return nil, errors.New("conformance: fix the suites first (these are faults of the suites, not of any provider):\n" + strings.Join(suiteErrs, "\n"))
	}

	plans := make([]plan, len(names))
	total := 0
	for i, n := range names {
		t := opt.Targets[n]
		plans[i] = plan{provider: n, target: t}
		for _, p := range selected {
			plans[i].runs = append(plans[i].runs, planRun{prompt: p, model: runModel(t, p)})
		}
	}
	if err := addAliasRuns(&opt, plans, selected); err != nil {
		return nil, err
	}
	for _, pl := range plans {
		rep.Planned += len(pl.runs)
		for _, r := range pl.runs {
			total += len(opt.Suites[r.prompt.Name].Cases)
		}
	}
	results := make([][]Result, len(plans))
	errs := make([]error, len(plans))
	var progressMu sync.Mutex
	done := 0
	report := func(pr Progress) {
		if opt.Progress == nil {
			return
		}
		progressMu.Lock()
		defer progressMu.Unlock()
		done++
		pr.Done, pr.Total = done, total
		opt.Progress(pr)
	}
	sem := make(chan struct{}, opt.Concurrency)
	// One provider's targets (a provider with no model of its own serving
	// several route targets, each a plan of its own) run one after another,
	// as its cases do: one endpoint and one account's rate limit, whose 429s
	// would leave results inconclusive (found by review, rconf14).
	turns := map[string]chan struct{}{}
	for _, pl := range plans {
		if name := providerOf(pl); turns[name] == nil {
			turns[name] = make(chan struct{}, 1)
		}
	}
	var wg sync.WaitGroup
	for i := range plans {
		wg.Go(func() {
			turn := turns[providerOf(plans[i])]
			select {
			case turn <- struct{}{}:
			case <-ctx.Done():
				errs[i] = ctx.Err()
				return
			}
			defer func() { <-turn }()
			select {
			case sem <- struct{}{}:
			case <-ctx.Done():
				errs[i] = ctx.Err()
				return
			}
			defer func() { <-sem }()
			results[i], errs[i] = runProvider(ctx, &opt, plans[i], report)
		})
	}
	wg.Wait()
	for _, rs := range results {
		for _, r := range rs {
			rep.Results = append(rep.Results, r)
			rep.Passed = rep.Passed && r.Passed && !r.NotRecorded() && !r.Exploratory
		}
	}
	rep.Rerun = rep.rerunInconclusive()
	// An interrupted run tested only some providers or prompts, and a
	// provider that ended in an error has results missing: neither passed,
	// whatever the results that finished say. A run whose every planned
	// result finished (ctx ended while the last was being recorded, which
	// recordContext survives) was not interrupted.
	finished := 0
	for _, r := range rep.Results {
		if !r.Interrupted {
			finished++
		}
	}
	if err := ctx.Err(); err != nil && (finished < rep.Planned || rep.Planned == 0) {
		rep.Passed, rep.Interrupted = false, true
		return rep, fmt.Errorf("conformance run interrupted: %w (unfinished results were not recorded, except as failed where a case had already failed)", err)
	}
	if err := errors.Join(errs...); err != nil {
		rep.Passed = false
		return rep, err
	}
	return rep, nil
}

// runModel is the model a target is tested with on prompt p, as a prompt job
// sends it: the prompt's, else the target's.
func runModel(t *race.Target, p *prompt.Prompt) string {
	if p.Model != "" {
		return p.Model
	}
	return t.Model
}

// addAliasRuns adds to the plans, after their own runs, the runs of the chat
// routes' model aliases (Options.ChatRoutes): for each route whose prompt is
// selected, each of its targets that is planned runs the prompt with each of
// the route's models it does not already run with. A route naming a prompt
// that is not loaded is an error.
func addAliasRuns(opt *Options, plans []plan, selected []*prompt.Prompt) error {
	for _, cr := range opt.ChatRoutes {
		if cr.Prompt == "" {
			continue
		}
		if _, err := opt.Prompts.Get(cr.Prompt, ""); err != nil {
			return fmt.Errorf("conformance: route %s: conformance_prompt: %w", cr.Name, err)
		}
		i := slices.IndexFunc(selected, func(p *prompt.Prompt) bool { return p.Name == cr.Prompt })
		if i < 0 {
			continue // not selected (--prompt), or without a suite (reported as such)
		}
		p := selected[i]
		for j := range plans {
			pl := &plans[j]
			// A chat job that names no alias sends the target's own model,
			// which the prompt's own run does not test when the prompt
			// names a model of its own.
			own := ""
			if t := opt.Targets[pl.provider]; t != nil {
				own = t.Model
			}
			for _, m := range cr.ModelsOn(pl.provider, own) {
				if m != "" && !pl.has(p, m) {
					pl.runs = append(pl.runs, planRun{prompt: p, model: m, alias: true})
				}
			}
		}
	}
	return nil
}

// unique is names without repeats, in their first order.
func unique(names []string) []string {
	var out []string
	for _, n := range names {
		if !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	return out
}

func targetNames(m map[string]*race.Target) []string {
	out := make([]string, 0, len(m))
	for n := range m {
		out = append(out, n)
	}
	sort.Strings(out)
	if len(out) == 0 {
		return []string{"none"}
	}
	return out
}

// runProvider runs every planned suite on one provider, one after another,
// recording each prompt × model result as soon as it is complete.
func runProvider(ctx context.Context, opt *Options, pl plan, report func(Progress)) ([]Result, error) {
	var out []Result
	var errs []error
	for _, r := range pl.runs {
		p, model := r.prompt, r.model
		s := opt.Suites[p.Name]
		temp := opt.Temperature
		if temp == nil {
			temp = s.Temperature
		}
		if temp == nil {
			zero := float32(0)
			temp = &zero
		}
		res := Result{Provider: pl.provider, Model: model, Prompt: p.Name, PromptVersion: p.Version, PromptDigest: p.Digest,
			CasesTotal: len(s.Cases), Temperature: *temp, Exploratory: *temp > MaxGateTemperature}
		if opt.TargetDigests != nil {
			res.TargetDigest = opt.TargetDigests(pl.provider, model, p.MaxTokens > 0)
		}
		configured := opt.Configured
		if configured == nil {
			configured = opt.Targets
		}
		// What routing counts a request for model on this target with: the
		// target's own window and tokenizer are another model's when model
		// is passed through in place of its own.
		sent := race.TargetFor(configured, pl.provider, pl.target, model)
		start := time.Now()
		for i := range s.Cases {
			c := &s.Cases[i]
			cr := runCase(ctx, pl.provider, pl.target, sent, opt.Retry, p, model, c, temp)
			if ctx.Err() != nil {
				// Unfinished. The case in flight is not counted (the
				// interruption may have failed it); a case that failed
				// before for a reason of the target's already fails the
				// pair, so that failure is recorded (the gate must not keep
				// admitting a provider on its previous pass). Without one,
				// nothing is: an unfinished run never records a pass, and a
				// transient provider error proves nothing.
				if real, _ := failures(res.Cases); real > 0 {
					res.Interrupted = true
					out = append(out, record(ctx, opt, pl.provider, r, res, s.Digest, time.Since(start), &errs))
				}
				return out, ctx.Err()
			}
			if cr.Passed {
				res.CasesPassed++
			}
			res.Cases = append(res.Cases, cr)
			report(Progress{Provider: pl.provider, Prompt: p.ID(), Case: c.Name, Model: model, Passed: cr.Passed})
		}
		out = append(out, record(ctx, opt, pl.provider, r, res, s.Digest, time.Since(start), &errs))
	}
	return out, errors.Join(errs...)
}

// record completes res, a pair that finished or (res.Interrupted) was
// interrupted after a failed case, and stores it (when opt.Store is set) under
// recordContext: a failure to store it is appended to errs and noted on the
// result.
func record(ctx context.Context, opt *Options, provider string, r planRun, res Result, suiteDigest string, elapsed time.Duration, errs *[]error) Result {
	res.DurationMS = elapsed.Milliseconds()
	res.Passed = !res.Interrupted && res.CasesTotal > 0 && res.CasesPassed == res.CasesTotal
	res.Inconclusive = !res.Interrupted && inconclusive(res.Cases)
	if opt.Store == nil || res.Inconclusive || res.Exploratory {
		return res
	}
	rctx, done := recordContext(ctx, opt, fmt.Sprintf("`router conformance run --provider %s --prompt %s`", provider, r.prompt.Name))
	run, err := opt.Store.RecordConformanceRun(rctx, store.NewConformanceRun{
		Provider: res.Provider, Model: res.Model, Prompt: res.Prompt, PromptVersion: res.PromptVersion,
		Passed: res.Passed, CasesTotal: res.CasesTotal, CasesPassed: res.CasesPassed, Cases: storableCases(res.Cases),
		SuiteDigest: suiteDigest, PromptDigest: res.PromptDigest, TargetDigest: res.TargetDigest, RouterVersion: opt.RouterVersion,
		Duration: elapsed,
	})
	if err = done(err); err != nil {
		who := res.Provider
		if r.alias {
			who += " with model " + res.Model
		}
		*errs = append(*errs, fmt.Errorf("%s on %s: %w", who, res.ID(), err))
		res.Recorded, res.RecordError = new(false), err.Error()
		return res
	}
	res.RunID, res.StartedAt, res.FinishedAt = run.ID, &run.StartedAt, &run.FinishedAt
	res.Recorded = new(true)
	return res
}

// recordContext is the context one result is recorded under: not ended by
// ctx (a finished result is worth keeping when the first Ctrl-C interrupts
// the run), but bounded by opt.RecordTimeout and ended at once by opt.Stop
// (the second Ctrl-C). done releases it and turns the error of a recording
// it cut short into one that says why and how to record the result (rerun,
// the command to run).
func recordContext(ctx context.Context, opt *Options, rerun string) (rctx context.Context, done func(error) error) {
	limit := opt.RecordTimeout
	if limit <= 0 {
		limit = DefaultRecordTimeout
	}
	base, cancelBase := context.WithCancelCause(context.WithoutCancel(ctx))
	rctx, cancel := context.WithTimeoutCause(base, limit,
		fmt.Errorf("the database did not answer within %v (a lock on conformance_runs? a failover?)", limit))
	unhook := func() bool { return false }
	if opt.Stop != nil {
		unhook = context.AfterFunc(opt.Stop, func() {
			cancelBase(errors.New("stopped by a second interrupt"))
		})
	}
	return rctx, func(err error) error {
		unhook()
		defer cancelBase(nil)
		defer cancel()
		if err == nil || rctx.Err() == nil {
			return err
		}
		// Short enough that the table (which shortens it) still shows the
		// command to rerun.
		return fmt.Errorf("%v: rerun %s: %w", context.Cause(rctx), rerun, err)
	}
}

// runCase runs one case through every stage; the first failing stage ends it.
// The case is sent through t, asking for model, and counted as sent
// (race.TargetFor: t itself when model is t's own).
func runCase(ctx context.Context, name string, t, sent *race.Target, retry race.Backoff, p *prompt.Prompt, model string, c *Case, temp *float32) CaseResult {
	cr := CaseResult{Name: c.Name}
	fail := func(stage string, vs ...contract.Violation) CaseResult {
		cr.Stage, cr.Failures = stage, vs
		return cr
	}
	// 1. The input and the rendering (Suite.Check verified both already; a
	// prompt reloaded since is caught here).
	if err := p.ValidateInput(c.input); err != nil {
		var ie *prompt.InputError
		if errors.As(err, &ie) {
			return fail(StageInput, ie.Violations...)
		}
		return fail(StageInput, contract.Violation{Rule: "input", Path: "$", Message: err.Error()})
	}
	msgs, err := p.Render(c.input)
	if err != nil {
		path := "$"
		var re *prompt.RenderError
		if errors.As(err, &re) {
			path = re.Field
		}
		return fail(StageRender, contract.Violation{Rule: "render", Path: path, Message: err.Error()})
	}

	// 2. The tokenizer: lossless, no special tokens. Suite.Check refuses a
	// case whose rendering fails either on any encoding (a fault of the
	// suite, never to be recorded against a target); a suite it did not
	// check is still caught here.
	enc, err := tokens.EncodingForModel(sent.Encoding, model)
	if err != nil {
		return fail(StageTokenizer, contract.Violation{Rule: "tokenizer.encoding", Path: "$", Message: err.Error()})
	}
	cr.Encoding = enc
	var tv []contract.Violation
	for i, m := range msgs {
		field := fmt.Sprintf("messages[%d].content", i)
		if err := tokens.RoundTrip(enc, m.Content); err != nil {
			tv = append(tv, contract.Violation{Rule: "tokenizer.round_trip", Path: field, Message: err.Error()})
		}
		if sp := tokens.ContainsSpecialTokens(m.Content); len(sp) > 0 {
			tv = append(tv, contract.Violation{Rule: "tokenizer.special_tokens", Path: field,
				Message: "the rendered message contains special-token text " + strings.Join(sp, ", ") + " from the input; providers refuse it or read it as a control token"})
		}
	}
	if len(tv) > 0 {
		return fail(StageTokenizer, tv...)
	}

	// 3. The context window, counted as routing counts it (tokens.Counted,
	// tokens.MaxTokensSent, the window of sent): the messages and the
	// response format sent with them, plus the max_tokens the target's
	// adapter sends. A target that passes here is one routing does not
	// exclude for the window.
	format := p.ProviderResponseFormat()
	maxTokens, byDefault := tokens.MaxTokensSent(p.MaxTokens, sent.DefaultMaxTokens)
	need, fits, err := tokens.Fits(enc, tokens.Counted(msgs, format, p.FormatText(), nil), maxTokens, sent.ContextWindow)
	if err != nil {
		return fail(StageTokenizer, contract.Violation{Rule: "tokenizer.count", Path: "$", Message: err.Error()})
	}
	cr.PromptTokens = need - maxTokens
	if !fits {
		defaulted := ""
		if byDefault {
			defaulted = " (the target's default, sent because the prompt sets none)"
		}
		return fail(StageContextWindow, contract.Violation{Rule: "context_window", Path: "$", Message: fmt.Sprintf(
			"the prompt needs %d tokens (its messages and response format) plus max_tokens %d%s = %d (%s); the window holds %d",
			cr.PromptTokens, maxTokens, defaulted, need, enc, sent.ContextWindow)})
	}

	// 4. The round trip through the real adapter, asking for the model under
	// test: the target's (or the prompt's), never the adapter's default, which
	// is another target's model when one provider serves several.
	req := &providers.Request{
		AttemptID: "conformance-" + uuid.NewString(), JobID: "conformance", Model: model, Messages: msgs,
		Temperature: temp, MaxTokens: p.MaxTokens, Seed: p.Seed, ResponseFormat: format,
	}
	cr.Sampling = &Sampling{Temperature: *temp, MaxTokens: p.MaxTokens, Seed: p.Seed}
	start := time.Now()
	resp, pe := call(ctx, name, t, retry, req)
	cr.LatencyMS = time.Since(start).Milliseconds()
	if pe != nil {
		msg := pe.Error()
		if pe.ProviderMessage != "" { // an operator's report: the provider's own words too
			msg += " (the provider said: " + pe.ProviderMessage + ")"
		}
		cr.Transient = transientError(pe)
		return fail(StageProvider, contract.Violation{Rule: "provider." + string(pe.Kind), Path: "$", Message: msg})
	}
	u := resp.Usage
	cr.Usage, cr.ResponseModel = &u, resp.Model

	// 5. Schema and contract, then 6. the expectations.
	doc, vs := p.Validator().Validate(resp.Content)
	stage := StageContract
	if len(vs) == 0 {
		vs, stage = c.Expect.Check(doc), StageExpect
	}
	if len(vs) > 0 {
		cr.Output = resp.Content
		if len(cr.Output) > maxOutput {
			cut := maxOutput
			for cut > 0 && !utf8.RuneStart(cr.Output[cut]) {
				cut--
			}
			cr.Output = cr.Output[:cut] + "…"
		}
		return fail(stage, vs...)
	}
	cr.Passed = true
	return cr
}

// storableCases is the per-case details as JSON that PostgreSQL's jsonb
// accepts: a reply or a provider's error message may hold a NUL character
// (JSON \u0000), which jsonb refuses; it becomes U+FFFD. Without this, a
// provider that regressed with such a reply would have its failing run go
// unrecorded, and its earlier pass would keep it eligible.
func storableCases(cases []CaseResult) any {
	if len(cases) == 0 {
		return nil // stored as an empty list
	}
	b, err := json.Marshal(cases)
	if err != nil {
		return cases // cannot happen; the store reports it
	}
	return json.RawMessage(jsontext.Sanitize(b))
}

// providerOf names the provider a plan's target sends to: its adapter's
// name, or the plan's own for a target without one.
func providerOf(pl plan) string {
	if pl.target != nil && pl.target.Provider != nil {
		return pl.target.Provider.Name()
	}
	return pl.provider
}
