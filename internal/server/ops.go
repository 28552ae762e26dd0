package server

import (
	"cmp"
	"context"
	"log/slog"
	"maps"
	"net/http"
	"slices"
	"sync"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/routerhq/router/conformance"
	"github.com/routerhq/router/internal/breaker"
	"github.com/routerhq/router/internal/config"
	"github.com/routerhq/router/internal/metrics"
	"github.com/routerhq/router/internal/ops"
	"github.com/routerhq/router/internal/prompt"
	"github.com/routerhq/router/internal/store"
)

// opsServices are the operator-facing parts of a serving router: circuit
// breakers (published to the database for every replica's view), the
// conformance gate, and metrics.
type opsServices struct {
	breakers *breaker.Set
	gate     *conformance.Gate
	metrics  *metrics.Metrics
	replica  string
	cancel   context.CancelFunc
	done     chan struct{}
	once     sync.Once

	// sent and sentNames are breakerSettings' sent and extra: the breakers
	// of models sent in place of a target's own, for the operator views.
	sent      map[breaker.SentModel]string
	sentNames []string
}

func startOps(ctx context.Context, cfg *config.Config, prompts *prompt.Set, st *store.Store, pool *pgxpool.Pool, dbm *metrics.DB, replica string, log *slog.Logger) *opsServices {
	o := &opsServices{replica: replica, done: make(chan struct{})}
	perTarget, sent, sentNames := breakerSettings(cfg, prompts.All()...)
	o.sent, o.sentNames = sent, sentNames
	o.breakers = breaker.New(perTarget, breaker.Options{Log: log, Sent: sent, OnChange: func(c breaker.Change) {
		if o.metrics != nil {
			o.metrics.BreakerChanged(c.Provider, c.To)
		}
	}})
	var targets []string // the race's series at 0 from start-up, per target and route
	for _, t := range cfg.AllTargets() {
		targets = append(targets, t.ID)
	}
	// and per breaker of a model sent in place of a target's own, under
	// which the race counts the attempts that send it (race's launch)
	targets = append(targets, sentNames...)
	o.metrics = metrics.New(metrics.Options{Pool: pool, DB: dbm, Breakers: o.breakers, Replicas: st, ReplicaMaxAge: breaker.StaleAfter(0), LiveJobs: st,
		Targets: targets, Routes: slices.Sorted(maps.Keys(cfg.Routes))})
	models := map[string]string{}
	for _, t := range cfg.AllTargets() {
		models[t.ID] = targetModel(t)
	}
	o.gate = conformance.NewGate(st, cfg.Conformance.Gate, cfg.Conformance.MaxAge.D(),
		conformance.TargetModels(func(id string) string { return models[id] }),
		conformance.TargetSettings(conformance.TargetDigests(cfg)))
	pctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	o.cancel = cancel
	go func() {
		defer close(o.done)
		breaker.NewPublisher(o.breakers, st, breaker.PublisherOptions{Replica: replica, Log: log}).Run(pctx)
	}()
	return o
}

// handler is the operator surface (internal/ops) for ops_listen.
func (o *opsServices) handler(cfg *config.Config, st *store.Store, prompts *prompt.Set, key string, log *slog.Logger) http.Handler {
	var names []string            // targets, as breakers and conformance count them
	models := map[string]string{} // the model each target sends, as the gate is told
	for _, t := range cfg.AllTargets() {
		names = append(names, t.ID)
		models[t.ID] = targetModel(t)
	}
	// Then the breakers of the models a route's `models` or a prompt's
	// `model` sends to a target's provider in place of the target's own,
	// which no target has: the ones startOps made.
	names = append(names, o.sentNames...)
	modelOf := func(id string) string { return models[id] }
	maxAge := cfg.Conformance.MaxAge.D()
	routes := ConformanceChatRoutes(cfg)
	digests := conformance.TargetDigests(cfg) // as the gate is told
	// The dashboard shows the money tiles with priced targets, and the
	// latency hedging bought only where a route keeps its losers.
	priced, keepLosers := false, false
	for _, t := range cfg.AllTargets() {
		priced = priced || t.PriceOrDefault() != nil
	}
	for _, r := range cfg.Routes {
		keepLosers = keepLosers || (r != nil && r.KeepLosers)
	}
	// Every route's targets in order, as the gate judges their roles: the
	// operator views ask the race's own gate about each.
	var gateRoutes []ops.GateRoute
	for _, name := range slices.Sorted(maps.Keys(cfg.Routes)) {
		r := cfg.Routes[name]
		if r == nil {
			continue
		}
		gr := ops.GateRoute{Name: name, ConformancePrompt: r.ConformancePrompt}
		for _, t := range cfg.RouteTargets(r) {
			gr.Targets = append(gr.Targets, t.ID)
		}
		gateRoutes = append(gateRoutes, gr)
	}
	return ops.New(ops.Config{Key: key, Metrics: o.metrics.Handler(), Providers: names, Breakers: o.breakers, SentBreakers: statsBreakers(o.sent), Replica: o.replica,
		Conformance:       ops.StoreConformance{Store: st, MaxAge: maxAge, Prompts: prompts, TargetModels: modelOf, TargetDigests: digests, ChatRoutes: routes},
		ConformanceMaxAge: maxAge, TargetModels: modelOf, TargetDigests: digests, ChatRoutes: routes, Priced: priced, KeepLosers: keepLosers,
		Gate: o.gate, GateRoutes: gateRoutes}, st, prompts, log)
}

// ConformanceChatRoutes is the routes gated by a conformance_prompt, with
// their target ids and `models`, in route name order: what `router
// conformance run` is given (conformance.Options.ChatRoutes) to test each
// alias, and the target's own model, on each target of the route. The
// operator views count those runs as the gate does.
func ConformanceChatRoutes(cfg *config.Config) []conformance.ChatRoute {
	var out []conformance.ChatRoute
	for _, name := range slices.Sorted(maps.Keys(cfg.Routes)) {
		r := cfg.Routes[name]
		if r == nil || r.ConformancePrompt == "" {
			continue
		}
		cr := conformance.ChatRoute{Name: name, Prompt: r.ConformancePrompt, Models: r.Models}
		for _, t := range cfg.RouteTargets(r) {
			cr.Targets = append(cr.Targets, t.ID)
		}
		out = append(out, cr)
	}
	return out
}

// stop stops publishing (removing this replica's rows) and the breakers' timers.
func (o *opsServices) stop() {
	o.once.Do(func() {
		o.cancel()
		<-o.done
		o.breakers.Close()
	})
}

// breakerSettings is the circuit breakers a serving router keeps, each with
// its provider's settings: one per target (config.AllTargets, named by the
// target id), and one per model a job may send to a target in place of the
// target's own — a name in the `models` of a route the target is on, or the
// `model` of a loaded prompt (prompts) — named as the target of that provider
// serving that model would be (config.TargetID): breakers are per provider ×
// model sent (SPEC §10, §15), so an alias's or a prompt's model's failures
// open no breaker of the target's own model. A prompt's model gets one on
// every route's targets, not only its route's: a job may name another route
// ("route" of POST /v1/jobs). sent maps each such (target, model) to its
// breaker; extra names the breakers that are no target's, those of routes'
// `models` in route name order, then those of prompts in prompt name order.
// Everything comes from the configuration and the prompts, sets known at
// start: nothing a caller sends makes a breaker.
func breakerSettings(cfg *config.Config, prompts ...*prompt.Prompt) (settings map[string]breaker.Settings, sent map[breaker.SentModel]string, extra []string) {
	settings = map[string]breaker.Settings{}
	for _, t := range cfg.AllTargets() {
		settings[t.ID] = breaker.SettingsFromConfig(t.Provider.Breaker)
	}
	sent = map[breaker.SentModel]string{}
	add := func(t config.ResolvedTarget, m string) {
		if m == "" || m == targetModel(t) {
			return // the target's own model: its own breaker
		}
		b := sentBreakerName(t.Provider, m)
		sent[breaker.SentModel{Target: t.ID, Model: m}] = b
		if _, ok := settings[b]; !ok {
			settings[b] = breaker.SettingsFromConfig(t.Provider.Breaker)
			extra = append(extra, b)
		}
	}
	routes := slices.Sorted(maps.Keys(cfg.Routes))
	for _, name := range routes {
		r := cfg.Routes[name]
		if r == nil {
			continue
		}
		for _, t := range cfg.RouteTargets(r) {
			for _, m := range r.Models {
				add(t, m)
			}
		}
	}
	for _, p := range prompts {
		if p == nil || p.Model == "" {
			continue
		}
		for _, name := range routes {
			if r := cfg.Routes[name]; r != nil {
				for _, t := range cfg.RouteTargets(r) {
					add(t, p.Model)
				}
			}
		}
	}
	return settings, sent, extra
}

// statsBreakers is sent (breakerSettings) as the operator's stats are told
// it (ops.Config.SentBreakers), in a stable order.
func statsBreakers(sent map[breaker.SentModel]string) []store.SentBreaker {
	var out []store.SentBreaker
	for _, k := range slices.SortedFunc(maps.Keys(sent), func(a, b breaker.SentModel) int {
		return cmp.Or(cmp.Compare(a.Target, b.Target), cmp.Compare(a.Model, b.Model))
	}) {
		out = append(out, store.SentBreaker{Provider: k.Target, Model: k.Model, Breaker: sent[k]})
	}
	return out
}

// sentBreakerName names the breaker of provider p serving model: the id of
// the target that would serve it (config.TargetID), the provider's own name
// for its own model (for a scripted provider without one, the name it is
// sent by: targetModel).
func sentBreakerName(p *config.Provider, model string) string {
	if own := targetModel(config.ResolvedTarget{Provider: p, Model: p.Model}); model == own {
		return p.Name
	}
	return config.TargetID(p, model)
}
