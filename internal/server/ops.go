package server

import (
	"context"
	"log/slog"
	"net/http"
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
		conformance.TargetModels(func(id string) string { return models[id] }))
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
	return ops.New(ops.Config{Key: key, Metrics: o.metrics.Handler(), Providers: names, Breakers: o.breakers, Replica: o.replica,
		Conformance:       ops.StoreConformance{Store: st, MaxAge: maxAge, Prompts: prompts, TargetModels: modelOf},
		ConformanceMaxAge: maxAge, TargetModels: modelOf}, st, prompts, log)
}

// stop stops publishing (removing this replica's rows) and the breakers' timers.
func (o *opsServices) stop() {
	o.once.Do(func() {
		o.cancel()
		<-o.done
		o.breakers.Close()
	})
}
