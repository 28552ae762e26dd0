package server

import (
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
}

func startOps(ctx context.Context, cfg *config.Config, st *store.Store, pool *pgxpool.Pool, dbm *metrics.DB, replica string, log *slog.Logger) *opsServices {
	o := &opsServices{replica: replica, done: make(chan struct{})}
	perTarget := map[string]breaker.Settings{}
	for _, t := range cfg.AllTargets() {
		perTarget[t.ID] = breaker.SettingsFromConfig(t.Provider.Breaker)
	}
	o.breakers = breaker.New(perTarget, breaker.Options{Log: log, OnChange: func(c breaker.Change) {
		if o.metrics != nil {
			o.metrics.BreakerChanged(c.Provider, c.To)
		}
	}})
	o.metrics = metrics.New(metrics.Options{Pool: pool, DB: dbm, Breakers: o.breakers, Replicas: st, ReplicaMaxAge: breaker.StaleAfter(0), LiveJobs: st})
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
	return ops.New(ops.Config{Key: key, Metrics: o.metrics.Handler(), Providers: names, Breakers: o.breakers, Replica: o.replica,
		Conformance:       ops.StoreConformance{Store: st, MaxAge: maxAge, Prompts: prompts, TargetModels: modelOf, TargetDigests: digests, ChatRoutes: routes},
		ConformanceMaxAge: maxAge, TargetModels: modelOf, TargetDigests: digests, ChatRoutes: routes, Priced: priced, KeepLosers: keepLosers}, st, prompts, log)
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
