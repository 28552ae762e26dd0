package server

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/routerhq/router/internal/config"
	"github.com/routerhq/router/internal/maintenance"
	"github.com/routerhq/router/internal/store"
	"github.com/routerhq/router/internal/webhook"
)

// lifecycle is the job-lifecycle machinery of a serving replica (SPEC §16):
// the maintenance leader's lease, the retention cleaner, and the River client
// that delivers completion events.
type lifecycle struct {
	leader *maintenance.Elector
	hooks  *webhook.Service
	stops  []func()
}

// startLifecycle syncs the configured webhooks into the database (the outbox
// trigger writes events only for owners that have one), starts the leader
// elector, the cleaner and the delivery client.
func startLifecycle(ctx context.Context, cfg *config.Config, st *store.Store, pool *pgxpool.Pool, replica string, log *slog.Logger) (_ *lifecycle, err error) {
	urls, secrets := map[string]string{}, map[string]string{}
	for i, k := range cfg.APIKeys {
		if k.Webhook == nil {
			continue
		}
		v := os.Getenv(k.Webhook.SecretEnv)
		if v == "" {
			return nil, fmt.Errorf("api_keys[%d].webhook.secret_env: environment variable %s (owner %s) is empty: set it to the signing secret (for example whsec_ and base64 of 32 random bytes)", i, k.Webhook.SecretEnv, k.Owner)
		}
		urls[k.Owner], secrets[k.Owner] = k.Webhook.URL, v
	}
	if err := st.SyncConfigWebhooks(ctx, urls); err != nil {
		return nil, fmt.Errorf("sync webhooks: %w", err)
	}
	l := &lifecycle{}
	defer func() {
		if err != nil {
			l.stop()
		}
	}()
	l.leader = maintenance.NewElector(st, "maintenance", replica, cfg.Retention.LeaderLease.D(), log)
	l.leader.Once(ctx) // a lone or first replica leads from its first recovery pass
	l.background(l.leader.Run)
	cleaner := &maintenance.Cleaner{Store: st, Leader: l.leader, After: cfg.Retention.Jobs.D(), Log: log}
	l.background(cleaner.Run)

	w := cfg.Webhooks
	l.hooks, err = webhook.NewService(pool, st, webhook.ServiceConfig{
		Config:     webhook.Config{Timeout: w.Timeout.D(), MaxResponseBytes: w.MaxResponseBytes, RetryFor: w.RetryFor.D(), Secrets: secrets},
		Backoff:    webhook.Backoff{Base: w.BackoffBase.D(), Cap: w.BackoffCap.D()},
		MaxWorkers: w.Workers,
		Log:        log,
	})
	if err != nil {
		return nil, err
	}
	if err := l.hooks.Start(context.WithoutCancel(ctx)); err != nil {
		return nil, err
	}
	l.stops = append(l.stops, func() {
		sctx, cancel := context.WithTimeout(context.Background(), w.Timeout.D()+5*time.Second)
		defer cancel()
		if err := l.hooks.Stop(sctx); err != nil {
			log.Warn("webhook deliveries did not stop cleanly", "err", err)
		}
	})
	return l, nil
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
