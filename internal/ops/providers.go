package ops

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"sort"
	"time"

	"github.com/routerhq/router/conformance"
	"github.com/routerhq/router/internal/problem"
	"github.com/routerhq/router/internal/prompt"
	"github.com/routerhq/router/internal/store"
)

// BreakerView is this process's circuit breakers as the operator endpoints need
// them; breaker.Set implements it. State must not take an admission slot.
type BreakerView interface {
	State(provider string) (ok bool, reason string)
}

// ConformanceCell is the latest conformance result of one provider for one
// prompt version: of the model the provider's target sends for the prompt
// when it has one, else the latest of a chat route's model asked of it (which
// counts too), else the latest of another model (which does not count).
type ConformanceCell struct {
	Provider      string `json:"provider"`
	Model         string `json:"model"` // the model the run asked for
	Prompt        string `json:"prompt"`
	PromptVersion string `json:"prompt_version"`
	Passed        bool   `json:"passed"`
	// Fresh: the pass counts for the gate now: it is younger than
	// conformance.max_age on the database clock, of a model the target may be
	// asked for (runJudge.models) and of the prompt content loaded now
	// (runJudge). Passed and Fresh is exactly what the gate admits for Model.
	Fresh  bool      `json:"fresh"`
	RanAt  time.Time `json:"ran_at"`
	Detail string    `json:"detail,omitempty"`
	// NotCounted, when set, is why the run does not count for the gate
	// whatever its age, in a few words for the dashboard's badge: "other
	// model" (the target now sends another) or "prompt changed" (its content
	// changed since the run). Detail says it in full, with what to run.
	NotCounted string `json:"-"`
}

// ConformanceSource lists the latest conformance results (SPEC §9).
type ConformanceSource interface {
	ConformanceMatrix(ctx context.Context) ([]ConformanceCell, error)
}

// Config is what the operator endpoints need beyond the store.
type Config struct {
	// Key, when set, is the operator key every request must send as
	// 'Authorization: Bearer <key>' or as the password of HTTP Basic
	// authentication (any user name: a browser's prompt). It is required when the operator listener
	// is not on a loopback address (the server wiring enforces that).
	Key string
	// Metrics serves GET /metrics; nil answers 404.
	Metrics http.Handler
	// Providers are the configured provider names, in configuration order.
	Providers []string
	// Breakers: this process's breakers; nil means no breakers (all eligible).
	Breakers BreakerView
	// SentBreakers are the breakers of the models a route sends to a
	// target's provider in place of the target's own (their names are among
	// Providers): the recent attempts that sent such a model are shown under
	// its breaker, as that breaker counted them, not under the target.
	SentBreakers []store.SentBreaker
	// Conformance: nil shows conformance as not available.
	Conformance ConformanceSource
	// Gate is the conformance gate the race runner asks (*conformance.Gate);
	// GET /v1/providers and the dashboard ask it, for each target of
	// GateRoutes in its role there, whether it admits the target now, and
	// show its refusals. nil: the gate is shown as not available.
	Gate GateJudge
	// GateRoutes are the configured routes, with their targets in order and
	// their conformance_prompt, as the gate judges their jobs.
	GateRoutes []GateRoute
	// ConformanceMaxAge is conformance.max_age: GET /v1/conformance judges
	// each result's fresh against it on the database clock, by the gate's
	// rule (zero or less: nothing is fresh, as the gate then admits nothing).
	// Give StoreConformance the same value.
	ConformanceMaxAge time.Duration
	// TargetModels is the model each target (by id) sends when its prompt
	// names none, as the conformance gate is told (conformance.TargetModels):
	// GET /v1/conformance counts a run as current and fresh only for that
	// model, or one of ChatRoutes. nil: runs of any model count. Give
	// StoreConformance the same.
	TargetModels func(target string) string
	// TargetDigests is each target's settings digest for a model
	// (conformance.TargetDigests), as the gate is told: a run recorded on
	// other settings is neither current nor fresh. nil: runs on any settings
	// count. Give StoreConformance the same.
	TargetDigests func(target, model string, ownMaxTokens bool) string
	// ChatRoutes are the routes gated by a conformance_prompt, as `router
	// conformance run` is given them (conformance.Options.ChatRoutes): a run
	// of one of their models (the route's `models`, and the target's own
	// model) on one of their targets counts as well, as the gate admits a
	// chat completion asking for it with that run. Give StoreConformance the
	// same.
	ChatRoutes []conformance.ChatRoute
	// Priced: some target has a price (providers[].price, a route target's
	// price). The dashboard shows its cost tiles then, or when the last
	// hour's attempts cost something; else they would only say $0.
	Priced bool
	// KeepLosers: some route sets keep_losers. The dashboard's "latency
	// bought per hedge win" tile needs it: a primary cancelled when its hedge
	// won counts 0 (store.HedgeCost), so without keep_losers the tile always
	// reads 0, and it is not shown.
	KeepLosers bool
	// Replica is this process's id, to mark its own row.
	Replica string
	// StaleAfter hides replicas whose breaker states are older (default 15s:
	// three missed publications at the default 5s interval).
	StaleAfter time.Duration
	// StatsWindow is the window of recent attempts for success rate and latency
	// (default 15m).
	StatsWindow time.Duration
	// DashboardRefresh is how often /dashboard reloads itself (default 5s).
	DashboardRefresh time.Duration
	// RecentJobs shown on /dashboard (default 20).
	RecentJobs int
}

func (o Config) withDefaults() Config {
	if o.StaleAfter <= 0 {
		o.StaleAfter = 15 * time.Second
	}
	if o.StatsWindow <= 0 {
		o.StatsWindow = 15 * time.Minute
	}
	if o.DashboardRefresh <= 0 {
		o.DashboardRefresh = 5 * time.Second
	}
	if o.RecentJobs <= 0 {
		o.RecentJobs = 20
	}
	return o
}

// ReplicaBreaker is one replica's view of a provider's breaker. Its counts
// are since the breaker's last state change (so all 0 while it is open).
type ReplicaBreaker struct {
	Replica   string `json:"replica"`
	Self      bool   `json:"self"` // the replica that answered this request
	State     string `json:"state"`
	Requests  int64  `json:"requests"`
	Successes int64  `json:"successes"`
	Failures  int64  `json:"failures"`
	// Exclusions are the attempts the breaker admitted but did not count, as
	// they say nothing of the provider (race.OutcomeIgnore: one cancelled
	// when another won or never sent, an answer that broke only the caller's
	// response_format, one cut by the job's deadline or the router's
	// shutdown): in Requests, in neither Successes nor Failures.
	Exclusions           int64     `json:"exclusions"`
	ConsecutiveFailures  int64     `json:"consecutive_failures"`
	ConsecutiveSuccesses int64     `json:"consecutive_successes"`
	ChangedAt            time.Time `json:"changed_at"`
	UpdatedAt            time.Time `json:"updated_at"`
}

// ProviderView is one entry of GET /v1/providers.
type ProviderView struct {
	Name string `json:"name"`
	// Eligible says only whether this replica's circuit breaker admits the
	// provider now. It says nothing of the conformance gate, which is per
	// route and prompt: a provider Eligible here that the gate refuses is
	// still never failed over or hedged to on that route (see Gate).
	Eligible      bool   `json:"eligible"`
	IneligibleWhy string `json:"ineligible_reason,omitempty"`
	// Gate is the conformance gate's word on the provider in each route where
	// it judges it (its fallbacks; every target under conformance.gate: all),
	// per prompt: admitted or the gate's reason and the command that admits
	// it. Empty where the gate judges the provider nowhere (a primary under
	// gate: fallbacks, gate: off), or when GateStatus says why.
	Gate []GateEntry `json:"gate"`
	// GateRefused counts the entries of Gate the gate refuses now.
	GateRefused int `json:"gate_refused"`
	// GateStatus, when set, says why Gate could not be made.
	GateStatus     string               `json:"gate_status,omitempty"`
	Breakers       []ReplicaBreaker     `json:"breakers"`
	Stats          *store.ProviderStats `json:"stats"` // nil without recent attempts
	StatsWindow    string               `json:"stats_window"`
	Conformance    []ConformanceCell    `json:"conformance"`
	ConformanceErr string               `json:"conformance_status,omitempty"` // "not available" when there is no source
}

// ProvidersReply is the body of GET /v1/providers.
type ProvidersReply struct {
	Replica   string         `json:"replica"`
	Providers []ProviderView `json:"providers"`
}

// ListProviders gathers GET /v1/providers: per configured provider, every live
// replica's breaker state, recent attempt statistics, conformance results,
// whether this replica's breaker admits it now, and the conformance gate's
// word on it in each route where it gates it. Its reads run at once, each
// within opsReadTimeout (readAll).
func (s *Server) ListProviders(ctx context.Context) (*ProvidersReply, error) {
	var conf conformanceRead
	var state providerState
	readAll(ctx,
		func(ctx context.Context) { conf = readConformance(ctx, s.cfg) },
		func(ctx context.Context) { state = s.readProviderState(ctx) })
	return s.listProviders(conf, state)
}

// conformanceRead is one read of the conformance source (ConformanceMatrix):
// the dashboard reads it once per render and gives it to both its providers
// table and its matrix.
type conformanceRead struct {
	configured bool // a source is configured
	cells      []ConformanceCell
	err        error
}

// readConformance reads ops' conformance source, when it has one.
func readConformance(ctx context.Context, ops Config) conformanceRead {
	if ops.Conformance == nil {
		return conformanceRead{}
	}
	cells, err := ops.Conformance.ConformanceMatrix(ctx)
	return conformanceRead{configured: true, cells: cells, err: err}
}

// providerState is what the providers view reads besides the conformance
// results: the live replicas' breaker states, the recent attempts'
// statistics and the gate's word (gateEntries), or the error that left the
// view without them.
type providerState struct {
	states     []store.BreakerState
	stats      map[string]store.ProviderStats
	gate       map[string][]GateEntry
	gateStatus string
	err        error
}

// readProviderState reads the providers view's state, one read after
// another within ctx. The gate is asked only when the breaker states and
// statistics were read: without them the view is an error.
func (s *Server) readProviderState(ctx context.Context) (p providerState) {
	if p.states, p.err = s.store.ListBreakerStates(ctx, s.cfg.StaleAfter); p.err != nil {
		return p
	}
	if p.stats, p.err = s.store.ProviderStats(ctx, s.cfg.StatsWindow, s.cfg.SentBreakers...); p.err != nil {
		return p
	}
	p.gate, p.gateStatus = gateEntries(ctx, s.cfg, s.prompts)
	return p
}

// listProviders is ListProviders from what it read.
func (s *Server) listProviders(conf conformanceRead, state providerState) (*ProvidersReply, error) {
	if state.err != nil {
		return nil, state.err
	}
	ops := s.cfg
	states, stats := state.states, state.stats
	cells := conf.cells
	confStatus := ""
	if !conf.configured {
		confStatus = "not available: no conformance source is configured"
	} else if conf.err != nil {
		s.log.Warn("could not read conformance results", "err", conf.err)
		cells, confStatus = nil, "not available: "+conf.err.Error()
	}
	gate, gateStatus := state.gate, state.gateStatus
	names := append([]string(nil), ops.Providers...)
	known := map[string]bool{}
	for _, n := range names {
		known[n] = true
	}
	// Providers some replica publishes but this one does not configure (a
	// configuration rollout in progress) are listed after the configured ones.
	var extra []string
	for _, st := range states {
		if !known[st.Provider] {
			known[st.Provider] = true
			extra = append(extra, st.Provider)
		}
	}
	sort.Strings(extra)
	names = append(names, extra...)

	out := &ProvidersReply{Replica: ops.Replica, Providers: make([]ProviderView, 0, len(names))}
	for _, name := range names {
		v := ProviderView{Name: name, Eligible: true, Breakers: []ReplicaBreaker{}, Conformance: []ConformanceCell{},
			StatsWindow: ops.StatsWindow.String(), ConformanceErr: confStatus, Gate: []GateEntry{}, GateStatus: gateStatus}
		if slices.Contains(ops.Providers, name) {
			v.Gate = append(v.Gate, gate[name]...)
			for _, e := range v.Gate {
				if !e.Admitted {
					v.GateRefused++
				}
			}
		}
		if ops.Breakers != nil {
			v.Eligible, v.IneligibleWhy = ops.Breakers.State(name)
		}
		if !slices.Contains(ops.Providers, name) {
			v.Eligible, v.IneligibleWhy = false, "not configured on this replica"
		}
		for _, st := range states {
			if st.Provider == name {
				v.Breakers = append(v.Breakers, ReplicaBreaker{
					Replica: st.Replica, Self: st.Replica == ops.Replica, State: st.State,
					Requests: st.Requests, Successes: st.Successes, Failures: st.Failures, Exclusions: st.Exclusions,
					ConsecutiveFailures: st.ConsecutiveFailures, ConsecutiveSuccesses: st.ConsecutiveSuccesses,
					ChangedAt: st.ChangedAt, UpdatedAt: st.UpdatedAt,
				})
			}
		}
		if ps, ok := stats[name]; ok {
			v.Stats = &ps
		}
		for _, c := range cells {
			if c.Provider == name {
				v.Conformance = append(v.Conformance, c)
			}
		}
		out.Providers = append(out.Providers, v)
	}
	return out, nil
}

// providers serves GET /v1/providers.
func (s *Server) providers() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		reply, err := s.ListProviders(r.Context())
		if err != nil {
			s.log.Error("could not list providers", "err", err)
			problem.Write(w, r, problem.Details{Status: http.StatusServiceUnavailable, Type: "unavailable", Title: "Cannot read provider state",
				Detail: "the router could not read provider state from its database; retry shortly"})
			return
		}
		writeJSON(w, http.StatusOK, reply)
	})
}

// StoreConformance is the ConformanceSource of the stored conformance runs
// (store.LatestConformanceRuns): for each provider × prompt version, the
// latest run of the model the provider's target sends for the prompt (else
// the latest of a chat route's model asked of it, else the latest of any
// model, which then does not count). Fresh when its last pass is younger than
// MaxAge (conformance.max_age) on the database clock — the database judges
// that by the conformance gate's own rule — and the run is of a model the
// target may be asked for and of the prompt content loaded now (runJudge). So
// a cell shown passed and fresh is one the gate admits, and with a MaxAge of
// zero or less nothing is fresh, as the gate then admits nothing.
type StoreConformance struct {
	Store  *store.Store
	MaxAge time.Duration
	// Prompts are the loaded prompts (their model and content digest); nil
	// judges neither.
	Prompts *prompt.Set
	// TargetModels is the model each target sends (Config.TargetModels); nil
	// counts runs of any model.
	TargetModels func(target string) string
	// TargetDigests is each target's settings digest (Config.TargetDigests);
	// nil counts runs on any settings.
	TargetDigests func(target, model string, ownMaxTokens bool) string
	// ChatRoutes are the chat routes gated by a conformance_prompt
	// (Config.ChatRoutes): runs of their models count too.
	ChatRoutes []conformance.ChatRoute
}

// ConformanceMatrix implements ConformanceSource.
func (c StoreConformance) ConformanceMatrix(ctx context.Context) ([]ConformanceCell, error) {
	runs, err := c.Store.LatestConformanceRuns(ctx, store.ConformanceFilter{MaxAge: c.MaxAge})
	if err != nil {
		return nil, err
	}
	j := runJudge{prompts: c.Prompts, modelOf: c.TargetModels, routes: c.ChatRoutes, digestOf: c.TargetDigests}
	type key struct{ provider, prompt, version string }
	type pick struct {
		i    int // into out
		rank int // 2: of the model the target sends for the prompt; 1: of a chat route's model; 0: of another
	}
	rank := func(v runVerdict) int {
		switch {
		case v.own:
			return 2
		case v.ofModel:
			return 1
		}
		return 0
	}
	chosen := map[key]pick{}
	out := make([]ConformanceCell, 0, len(runs))
	for _, r := range runs {
		v := j.judge(r)
		detail := fmt.Sprintf("%d/%d cases passed", r.CasesPassed, r.CasesTotal)
		if v.why != "" {
			detail += "; " + v.why
		}
		cell := ConformanceCell{Provider: r.Provider, Model: r.Model, Prompt: r.Prompt, PromptVersion: r.PromptVersion, Passed: r.Passed,
			Fresh: v.fresh, RanAt: r.FinishedAt, Detail: detail, NotCounted: v.short}
		k := key{r.Provider, r.Prompt, r.PromptVersion}
		p, seen := chosen[k]
		switch r := rank(v); {
		case !seen:
			chosen[k] = pick{len(out), r}
			out = append(out, cell)
		case r > p.rank, // the target's model before a chat route's, before another
			r == p.rank && cell.RanAt.After(out[p.i].RanAt): // else the latest
			out[p.i], chosen[k] = cell, pick{p.i, r}
		}
	}
	return out, nil
}
