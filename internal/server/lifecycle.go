package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/routerhq/router/internal/config"
	"github.com/routerhq/router/internal/maintenance"
	"github.com/routerhq/router/internal/metrics"
	"github.com/routerhq/router/internal/store"
	"github.com/routerhq/router/internal/webhook"
)

// lifecycle is the job-lifecycle machinery of a serving replica (SPEC §16):
// the maintenance leader's lease, the retention cleaner, and the River client
// that delivers completion events.
type lifecycle struct {
	leader *maintenance.Elector
	hooks  *webhook.Service
	// hookMetrics counts the delivery tries (router_webhook_deliveries_total);
	// registerMetrics puts it on /metrics.
	hookMetrics *metrics.Webhooks
	// maintMetrics says whether this replica leads maintenance and what
	// retention did (router_maintenance_leader, router_retention_*).
	maintMetrics *metrics.Maintenance
	stops        []func()
}

// registerMetrics adds the lifecycle's collectors to the operator surface's
// metrics: call it once both exist.
func (l *lifecycle) registerMetrics(m *metrics.Metrics) {
	m.Registry().MustRegister(l.hookMetrics, l.maintMetrics)
}

// startLifecycle checks the configured webhooks' signing secrets, syncs the
// webhooks into the database (the outbox trigger writes events only for owners
// that have one), starts the leader elector, the cleaner and the delivery
// client.
func startLifecycle(ctx context.Context, cfg *config.Config, st *store.Store, pool *pgxpool.Pool, replica string, log *slog.Logger, now context.Context) (_ *lifecycle, err error) {
	if now == nil {
		now = context.Background()
	}
	urls, secrets, previous, err := configWebhooks(cfg, os.Getenv)
	if err != nil {
		return nil, err
	}
	if err := st.SyncConfigWebhooks(ctx, urls); err != nil {
		return nil, fmt.Errorf("sync webhooks: %w", err)
	}
	l := &lifecycle{hookMetrics: metrics.NewWebhooks()}
	defer func() {
		if err != nil {
			l.stop()
		}
	}()
	l.leader = maintenance.NewElector(st, "maintenance", replica, cfg.Retention.LeaderLease.D(), log)
	l.maintMetrics = metrics.NewMaintenance(l.leader)
	l.leader.Once(ctx) // a lone or first replica leads from its first recovery pass
	l.background(l.leader.Run)
	w := cfg.Webhooks
	// Retention keeps a job while one of its events may still be delivered
	// (store.Options.RedeliveryWindow, set from the configuration).
	cleaner := &maintenance.Cleaner{Store: st, Leader: l.leader, After: cfg.Retention.Jobs.D(), Log: log, Observer: l.maintMetrics,
		ConformanceAfter: cfg.Retention.ConformanceRuns.D()}
	l.background(cleaner.Run)

	l.hooks, err = webhook.NewService(pool, st, webhook.ServiceConfig{
		Config:              webhook.Config{Timeout: w.Timeout.D(), MaxResponseBytes: w.MaxResponseBytes, RetryFor: w.RetryFor.D(), Secrets: secrets, PreviousSecrets: previous},
		Backoff:             webhook.Backoff{Base: w.BackoffBase.D(), Cap: w.BackoffCap.D()},
		MaxWorkers:          w.Workers,
		MaxInflightPerOwner: w.MaxInflightPerOwner,
		Log:                 log,
		Observer:            l.hookMetrics,
	})
	if err != nil {
		return nil, err
	}
	if err := l.hooks.Start(context.WithoutCancel(ctx)); err != nil {
		return nil, err
	}
	l.stops = append(l.stops, func() {
		// Deliveries in flight may finish, unless the operator asks to stop
		// at once: then they are cut now, recorded as interrupted and
		// retried later (webhook.Service.Stop).
		sctx, cancel := context.WithTimeout(now, w.Timeout.D()+5*time.Second)
		defer cancel()
		if err := l.hooks.Stop(sctx); err != nil {
			log.Warn("webhook deliveries did not stop cleanly", "err", err)
		}
	})
	return l, nil
}

// StopNow cuts the shutdown's drain short, for an operator who will not wait
// for it (a second signal): attempts still in flight are cut now, as when
// shutdown.drain runs out, and each is recorded for what is known of it —
// failed if the provider had begun answering, unknown (error kind shutdown)
// if not, as the provider may have done the work — and their jobs are left
// to recovery on another replica. It returns once their job runs have ended,
// or have been given up on (race.Config.StopGrace, then a last short wait);
// ServeListeners' drain ends with it, and ServeListeners goes on with the
// rest of the shutdown at once. StopNow shortens none of Close's waits:
// Close stops waiting for webhook deliveries and for database connections
// still in use only when Options.StopNow ends (cmd/router gives it the
// context of the same second signal). It is safe to call at any time, more
// than once, and after Close.
func (s *Server) StopNow() {
	if s.runner == nil {
		return
	}
	ended, cancel := context.WithCancel(context.Background())
	cancel()
	s.runner.Stop(ended) // a drain waiting in ServeListeners ends with it
}

// InFlight is how many jobs this replica runs whose attempts the shutdown
// has not cut yet: those StopNow would cut now. It is 0 once the drain is
// over.
func (s *Server) InFlight() int {
	if s.runner == nil || s.runner.Cut() {
		return 0
	}
	return s.runner.Running()
}

func (l *lifecycle) background(fn func(ctx context.Context)) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); fn(ctx) }()
	l.stops = append(l.stops, func() { cancel(); <-done })
}

// stop stops everything, newest first.
func (l *lifecycle) stop() {
	for i := len(l.stops) - 1; i >= 0; i-- {
		l.stops[i]()
	}
	l.stops = nil
}

// configWebhooks returns the configured owners' webhook URLs, signing
// secrets (from the environment variables api_keys[].webhook.secret_env) and
// the secrets being rotated out (previous_secret_env), refusing every empty
// or unusable secret in one error, every value shared by secrets of
// different parties (sharedSecrets) and every provider or operator key no
// header can carry (unsendableKeys). Stored keys' secrets (router keys create
// --webhook-url) are made by the router and need no check.
func configWebhooks(cfg *config.Config, getenv func(string) string) (urls, secrets, previous map[string]string, err error) {
	urls, secrets, previous = map[string]string{}, map[string]string{}, map[string]string{}
	var problems []string
	seen := map[[2]string]bool{}
	check := func(i int, owner, field, env, v string) {
		if seen[[2]string{owner, env}] {
			return // the same owner's secret, already checked
		}
		seen[[2]string{owner, env}] = true
		if err := webhook.ValidateSecret(v); err != nil {
			// The variable's name only when it looks like one (config.EnvRef).
			problems = append(problems, fmt.Sprintf("api_keys[%d].webhook.%s: %s (owner %s): %v", i, field, config.EnvRef(env), owner, err))
		}
	}
	for i, k := range cfg.APIKeys {
		if k.Webhook == nil {
			continue
		}
		// Read without surrounding white space, as API and provider keys are:
		// a secret file ending in a newline would otherwise sign every
		// delivery with a key its receiver does not hold.
		v := strings.TrimSpace(getenv(k.Webhook.SecretEnv))
		urls[k.Owner], secrets[k.Owner] = k.Webhook.URL, v
		check(i, k.Owner, "secret_env", k.Webhook.SecretEnv, v)
		if env := k.Webhook.PreviousSecretEnv; env != "" {
			previous[k.Owner] = strings.TrimSpace(getenv(env))
			check(i, k.Owner, "previous_secret_env", env, previous[k.Owner])
		}
	}
	var errs []error
	if len(problems) > 0 {
		errs = append(errs, fmt.Errorf("unusable webhook signing secrets (deliveries would fail, or their signatures could be forged):\n  %s\n"+
			"set each environment variable to a good secret and start again (a rotation's previous_secret_env holds the old secret, until every receiver verifies with the new one: then remove it); the owner's receiver verifies with the same secret, so give it the new one", strings.Join(problems, "\n  ")))
	}
	if err := sharedSecrets(cfg, getenv); err != nil {
		errs = append(errs, err)
	}
	if err := unsendableKeys(cfg, getenv); err != nil {
		errs = append(errs, err)
	}
	if len(errs) > 0 {
		return nil, nil, nil, errors.Join(errs...)
	}
	return urls, secrets, previous, nil
}
