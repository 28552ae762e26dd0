package conformance

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/routerhq/router/internal/prompt"
	"github.com/routerhq/router/internal/race"
	"github.com/routerhq/router/internal/store"
)

// Gate modes (conformance.gate in the configuration). The gate is asked when
// a job first chooses a target, as a failover or a hedge (or, with all, as
// the primary); a retry goes to a target the job has already tried, which the
// gate admitted then, and is not asked again.
const (
	GateFallbacks = "fallbacks" // every target but the route's first (failover and hedge) needs a fresh pass; the primary never does
	GateAll       = "all"       // every role, the primary included
	GateOff       = "off"       // no gate
)

// DefaultCacheFor is how long the Gate reuses what it read from the database
// for one provider × prompt version. A run recorded by `router conformance run`
// takes effect within it.
const DefaultCacheFor = 2 * time.Second

// readTimeout bounds one read of the database by the gate.
const readTimeout = 5 * time.Second

// failureCacheFor caps how long the Gate reuses a failed read as a refusal
// (min(cacheFor, failureCacheFor); none when cacheFor is 0): while the
// database cannot be read (a table locked by ALTER TABLE, REINDEX or VACUUM
// FULL, a database that does not answer), following decisions refuse at once
// instead of each waiting readTimeout.
const failureCacheFor = time.Second

// Gate is the conformance gate of the race runner (race.Gate). It reads only the
// database: a provider may take a gated attempt of prompt X at version V asking
// for model M only when its latest run for exactly (X, V) with model M passed,
// was recorded against the prompt's current content (its digest; a run recorded
// without one counts for any content) and against the target's current
// settings (TargetDigest, when the gate is told them: TargetSettings; a run
// recorded without one counts for any settings), and finished less than
// maxAge ago on the database clock. Standings are cached for a short time;
// the age of a cached standing keeps counting on the monotonic clock from the
// database's reading. When the database cannot be read, the gate refuses
// (fails closed), and keeps refusing with the same reason, without reading,
// for min(cacheFor, failureCacheFor) after the failed read. Concurrent
// decisions on the same provider × model × prompt version share one read in
// flight; each waits for it only as long as its own context allows. Safe for
// concurrent use.
type Gate struct {
	st       *store.Store
	mode     string
	maxAge   time.Duration
	cacheFor time.Duration
	now      func() time.Time // monotonic; a test seam
	// readTimeout bounds one read (the readTimeout constant); a test seam.
	readTimeout time.Duration
	// read reads a standing (store.ConformanceStandingOf); a test seam.
	read func(ctx context.Context, provider, model, prompt, version string, maxAge time.Duration) (*store.ConformanceStanding, error)
	// joined, when set, is called when a decision waits for a read already
	// in flight; a test seam.
	joined func()
	// modelOf, when set, is the model a target serves (TargetModels).
	modelOf func(target string) string
	// digestOf, when set, is a target's settings digest for a model
	// (TargetSettings).
	digestOf func(target, model string, ownMaxTokens bool) string

	mu      sync.Mutex
	cache   map[gateKey]cached
	flights map[gateKey]*flight // the reads in flight
}

type gateKey struct{ provider, model, prompt, version string }

// cached is a read's outcome: a standing, read at read (when the read
// started: its LastPassAge was measured during it), or the error of a failed
// read, which ended at read.
type cached struct {
	standing *store.ConformanceStanding
	err      error
	read     time.Time
}

// flight is a read in flight; res is set before done closes.
type flight struct {
	done chan struct{}
	res  cached
}

var _ race.BatchGate = (*Gate)(nil)

// GateOption adjusts a Gate.
type GateOption func(*Gate)

// TargetModels tells the gate the model each target (by id) serves, so that
// only runs of that model count: a target whose provider's model changed in
// the configuration keeps its id, and the old model's pass must not admit the
// new one (SPEC §15: results are per provider × model). Without it, a run of
// any model counts.
func TargetModels(modelOf func(target string) string) GateOption {
	return func(g *Gate) { g.modelOf = modelOf }
}

// TargetSettings tells the gate the digest of each target's settings
// (TargetDigest, for the target's id, the model asked for and whether the
// prompt's requests set their own max_tokens; TargetDigests makes it from the
// configuration), so that only runs recorded against those settings count
// (SameTarget): a target whose provider's type, base_url or request settings
// changed in the configuration keeps its id and model, and a pass of the old
// endpoint must not admit the new one. A run recorded without a digest
// (before migration 0024), or a target digestOf returns "" for, counts for
// any settings. Without it, runs count for any settings.
func TargetSettings(digestOf func(target, model string, ownMaxTokens bool) string) GateOption {
	return func(g *Gate) { g.digestOf = digestOf }
}

// CacheFor sets how long standings read from the database are reused, and a
// failed read is reused as a refusal for min(d, 1s) (0: every decision reads
// the database, concurrent decisions sharing a read in flight, and nothing
// is reused).
func CacheFor(d time.Duration) GateOption { return func(g *Gate) { g.cacheFor = max(d, 0) } }

// NewGate makes the gate. mode is fallbacks (also for ""), all or off; any other
// value is treated as all, the strictest. maxAge is conformance.max_age.
func NewGate(st *store.Store, mode string, maxAge time.Duration, opts ...GateOption) *Gate {
	switch mode {
	case "":
		mode = GateFallbacks
	case GateFallbacks, GateAll, GateOff:
	default:
		mode = GateAll
	}
	g := &Gate{st: st, mode: mode, maxAge: maxAge, cacheFor: DefaultCacheFor, now: time.Now, readTimeout: readTimeout,
		read: st.ConformanceStandingOf, cache: map[gateKey]cached{}, flights: map[gateKey]*flight{}}
	for _, o := range opts {
		o(g)
	}
	return g
}

// Mode returns the gate's mode.
func (g *Gate) Mode() string { return g.mode }

// Applies reports whether the gate judges an attempt of this role.
func (g *Gate) Applies(role string) bool {
	switch g.mode {
	case GateOff:
		return false
	case GateFallbacks:
		return role != store.RolePrimary
	}
	return true
}

// Allow judges an attempt of a prompt job: it asks for the prompt's model, else
// the target's (TargetModels). A job without a prompt (p == nil) is not gated.
func (g *Gate) Allow(ctx context.Context, provider string, p *prompt.Prompt, role string) (bool, string) {
	return g.AllowModel(ctx, provider, "", p, role)
}

// AllowModel implements race.Gate: model is the model the attempt will ask
// for (a chat request's model alias, the prompt's model or the target's), and
// only runs of that model count. "" is the model a prompt job sends (Allow);
// without TargetModels and a prompt that names no model, runs of any model
// count. A job without a prompt (p == nil) is not gated.
func (g *Gate) AllowModel(ctx context.Context, provider, model string, p *prompt.Prompt, role string) (bool, string) {
	if p == nil || !g.Applies(role) {
		return true, ""
	}
	if model == "" {
		model = g.runModel(provider, p)
	}
	st, age, err := g.standing(ctx, provider, model, p.Name, p.Version)
	return g.verdict(provider, model, p, st, age, err)
}

// AllowModels implements race.BatchGate: it answers each ask as AllowModel
// would, but starts every read the asks need (a standing neither cached nor
// in flight) before it waits for any, so a plan waits for its slowest read —
// each bounded by readTimeout, which bounds the whole wait — not for one
// read after another: under the default gate an ungated primary's first
// attempt is not held back by its fallbacks' reads one readTimeout each
// while conformance_runs cannot be read. A read that fails or times out
// refuses its asks (fails closed), as AllowModel does. When every answer is
// cached it reads nothing and starts nothing.
func (g *Gate) AllowModels(ctx context.Context, asks []race.GateAsk) []race.GateAnswer {
	out := make([]race.GateAnswer, len(asks))
	models := make([]string, len(asks)) // the model each gated ask is judged for
	gated := false
	for i, a := range asks {
		if a.Prompt == nil || !g.Applies(a.Role) {
			out[i].OK = true
			continue
		}
		gated = true
		models[i] = a.Model
		if models[i] == "" {
			models[i] = g.runModel(a.Provider, a.Prompt)
		}
	}
	if !gated {
		return out
	}
	type outcome struct {
		c      cached
		f      *flight // the read that gives c, when not cached
		joined bool
	}
	outcomes := make([]outcome, len(asks))
	now := g.now()
	g.mu.Lock()
	for i, a := range asks {
		if a.Prompt == nil || !g.Applies(a.Role) {
			continue
		}
		o := &outcomes[i]
		var hit bool
		o.c, hit, o.f, o.joined = g.lookupLocked(ctx, gateKey{a.Provider, models[i], a.Prompt.Name, a.Prompt.Version}, now)
		if hit {
			o.f = nil
		}
	}
	g.mu.Unlock()
	for i, a := range asks {
		if a.Prompt == nil || !g.Applies(a.Role) {
			continue
		}
		o := &outcomes[i]
		var st *store.ConformanceStanding
		var age time.Duration
		var err error
		switch {
		case o.f == nil:
			st, age, err = o.c.at(now)
		default:
			if o.joined && g.joined != nil {
				g.joined()
			}
			st, age, err = o.f.await(ctx)
		}
		out[i].OK, out[i].Reason = g.verdict(a.Provider, models[i], a.Prompt, st, age, err)
	}
	return out
}

// verdict is the gate's decision on provider for p's jobs asking for model,
// from the standing read (and its last pass's age), or the read's error.
func (g *Gate) verdict(provider, model string, p *prompt.Prompt, st *store.ConformanceStanding, age time.Duration, err error) (bool, string) {
	if err != nil {
		// race.GateUnread: a failed job's next_step tells this refusal,
		// which clears by itself, from the others.
		return false, fmt.Sprintf("%s for %s (%v)", race.GateUnread, p.ID(), err)
	}
	sameTarget := st.Latest == nil || SameTarget(g.digestOf, st.Latest.TargetDigest, provider, model, p)
	return g.judge(st, age, p, model, sameTarget)
}

// runModel is the model `router conformance run` tests target provider with
// on prompt p (conformance.Run): the prompt's, else the target's; "" when the
// gate does not know the target's.
func (g *Gate) runModel(provider string, p *prompt.Prompt) string {
	if p.Model != "" || g.modelOf == nil {
		return p.Model
	}
	return g.modelOf(provider)
}

// ownModel is the model target serves (TargetModels); "" when the gate is
// not told.
func (g *Gate) ownModel(target string) string {
	if g.modelOf == nil {
		return ""
	}
	return g.modelOf(target)
}

// Forget drops the cached standings and refusals, so the next decisions read
// the database (a read in flight still answers the decisions waiting for it,
// but caches nothing).
func (g *Gate) Forget() {
	g.mu.Lock()
	clear(g.cache)
	clear(g.flights)
	g.mu.Unlock()
}

// standing returns the (possibly cached) standing and the age of its last pass
// now, or the error of a read that failed (possibly a cached one, for
// min(cacheFor, failureCacheFor) after it), or ctx's error if ctx ends while
// the read is in flight. Concurrent misses of the same key share one read.
func (g *Gate) standing(ctx context.Context, provider, model, name, version string) (*store.ConformanceStanding, time.Duration, error) {
	now := g.now()
	g.mu.Lock()
	c, hit, f, joined := g.lookupLocked(ctx, gateKey{provider, model, name, version}, now)
	g.mu.Unlock()
	if hit {
		return c.at(now)
	}
	if joined && g.joined != nil {
		g.joined()
	}
	return f.await(ctx)
}

// lookupLocked returns key's cached outcome when it may be reused at now
// (hit), else the read in flight that gives it, started (with ctx's values,
// not its end: fetch) when none was (joined: one was). g.mu is held.
func (g *Gate) lookupLocked(ctx context.Context, key gateKey, now time.Time) (c cached, hit bool, f *flight, joined bool) {
	if c, ok := g.cache[key]; ok {
		if c.err != nil && now.Sub(c.read) < min(g.cacheFor, failureCacheFor) {
			return c, true, nil, false
		}
		if c.err == nil && now.Sub(c.read) < g.cacheFor {
			return c, true, nil, false
		}
	}
	f, joined = g.flights[key]
	if !joined {
		f = &flight{done: make(chan struct{})}
		g.flights[key] = f
		go g.fetch(context.WithoutCancel(ctx), key, f, now)
	}
	return cached{}, false, f, joined
}

// at is a cached outcome at now: its standing with the age of its last pass
// now, or its read's error.
func (c cached) at(now time.Time) (*store.ConformanceStanding, time.Duration, error) {
	if c.err != nil {
		return nil, 0, c.err
	}
	return c.standing, c.standing.LastPassAge + now.Sub(c.read), nil
}

// await waits for the read's outcome as long as ctx allows: its standing
// with the age of its last pass (measured during the read), or its error, or
// ctx's.
func (f *flight) await(ctx context.Context) (*store.ConformanceStanding, time.Duration, error) {
	select {
	case <-f.done:
	case <-ctx.Done():
		return nil, 0, ctx.Err()
	}
	if f.res.err != nil {
		return nil, 0, f.res.err
	}
	return f.res.standing, f.res.standing.LastPassAge, nil
}

// fetch reads key's standing for flight f, begun at start, caches the
// outcome and hands it to the decisions waiting for f. The read is bounded by
// readTimeout and by no caller's context: the orchestrator asks with a
// background context, and a database that does not answer must refuse
// instead of stalling the race; a caller that gives up does not fail the read
// for the others waiting for it.
func (g *Gate) fetch(ctx context.Context, key gateKey, f *flight, start time.Time) {
	rctx, cancel := context.WithTimeout(ctx, g.readTimeout)
	st, err := g.read(rctx, key.provider, key.model, key.prompt, key.version, g.maxAge)
	cancel()
	// A standing ages from before the read (its LastPassAge was measured
	// during it), or a cached decision undercounts its age by the read's
	// duration and admits a pass past max_age; a failure is refused for a
	// while from when the read ended, or a read that took longer than that
	// while (up to readTimeout) would cache nothing.
	res := cached{standing: st, read: start}
	if err != nil {
		res = cached{err: err, read: g.now()}
	}
	g.mu.Lock()
	if g.flights[key] == f { // not forgotten meanwhile
		delete(g.flights, key)
		if g.cacheFor > 0 {
			g.cache[key] = res
		}
	}
	g.mu.Unlock()
	f.res = res
	close(f.done)
}

// judge turns a standing of prompt p for model into the decision and its
// reason; sameTarget: its latest run was recorded on the target's settings of
// now (SameTarget).
// Every reason names conformance (as AllowModel's read failure does): a
// failed job's next_step (internal/api's gatedTargets) tells the gate's
// refusals in its routing from the others' by it.
func (g *Gate) judge(st *store.ConformanceStanding, age time.Duration, p *prompt.Prompt, model string, sameTarget bool) (bool, string) {
	id, noPass := p.ID(), "no passing conformance run for "+p.ID()
	if model != "" {
		noPass += " with model " + model
	}
	rerun := fmt.Sprintf("`router conformance run --provider %s --prompt %s`", st.Provider, st.Prompt)
	switch {
	case st.Latest == nil:
		why := noPass
		switch tested := g.runModel(st.Provider, p); {
		case model != "" && tested != "" && model != tested && model == g.ownModel(st.Provider):
			// A chat completion on a route whose conformance_prompt names a
			// model of its own, naming no model of the route's `models`: it
			// sends the target's own model, which the run tests as well.
			why += fmt.Sprintf(", the target's own model, which a chat completion naming no model alias sends (a pass counts only for the model it ran with, and the prompt's own run is with %s: run %s, which also tests the target's own model)",
				tested, rerun)
		case model != "" && tested != "" && model != tested:
			// A model the job itself asks for (a chat request naming a model of
			// the route's models), which the run tests as well.
			why += fmt.Sprintf(", which this job asks for (a pass counts only for the model it ran with: run %s, which also tests the models of the route's `models`)",
				rerun)
		case len(st.PassedModels) > 0:
			why += fmt.Sprintf(" (it passed with model %s; the target now sends %s: run %s)", st.PassedModels[0], model, rerun)
		case len(st.PassedVersions) > 0:
			why += fmt.Sprintf(" (it passed version %s; a new prompt version needs a new run: %s)", strings.Join(st.PassedVersions, ", "), rerun)
		default:
			// Never run: the state of every target of a new deployment
			// that nobody has tested yet, so the reason says what admits it.
			why += fmt.Sprintf(" (run %s)", rerun)
		}
		return false, why
	case !st.Latest.Passed && !p.SameContent(st.Latest.PromptDigest):
		// A failure on other content, or (next) on other settings, is not
		// the target's now: said as a plain failure, it reads as one of the
		// new endpoint, and names no run (GET /v1/conformance says it too).
		return false, fmt.Sprintf("the prompt %s changed since its last run, which failed with %d of %d cases passed; bump its version or rerun %s",
			id, st.Latest.CasesPassed, st.Latest.CasesTotal, rerun)
	case !st.Latest.Passed && !sameTarget:
		return false, fmt.Sprintf("the endpoint or settings of target %s changed since its last run on %s, which failed with %d of %d cases passed (its provider's type, base_url or request settings); run %s",
			st.Provider, id, st.Latest.CasesPassed, st.Latest.CasesTotal, rerun)
	case !st.Latest.Passed:
		why := fmt.Sprintf("last conformance run for %s failed (%d of %d cases passed)", id, st.Latest.CasesPassed, st.Latest.CasesTotal)
		if st.LastPassAt == nil {
			why = fmt.Sprintf("%s (the last run passed %d of %d cases)", noPass, st.Latest.CasesPassed, st.Latest.CasesTotal)
		}
		return false, why
	case st.LastPassAt == nil: // cannot happen: the latest run passed
		return false, noPass
	case !p.SameContent(st.Latest.PromptDigest):
		return false, fmt.Sprintf("the prompt %s changed since its last pass; bump its version or rerun %s", id, rerun)
	case !sameTarget:
		return false, fmt.Sprintf("the endpoint or settings of target %s changed since its last pass on %s (its provider's type, base_url or request settings); run %s",
			st.Provider, id, rerun)
	case age >= g.maxAge:
		return false, fmt.Sprintf("last pass is %s old (conformance.max_age is %s; run %s)", HumanAge(age), HumanAge(g.maxAge), rerun)
	}
	return true, ""
}

// HumanAge writes a duration the way a person says an age: "9 days", "5 hours",
// "12 minutes", "40 seconds".
func HumanAge(d time.Duration) string {
	unit := func(n int64, one string) string {
		if n == 1 {
			return "1 " + one
		}
		return fmt.Sprintf("%d %ss", n, one)
	}
	switch {
	case d >= 48*time.Hour:
		return unit(int64(d/(24*time.Hour)), "day")
	case d >= 2*time.Hour:
		return unit(int64(d/time.Hour), "hour")
	case d >= 2*time.Minute:
		return unit(int64(d/time.Minute), "minute")
	}
	return unit(int64(max(d, 0)/time.Second), "second")
}
