package webhook

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
)

// ServiceConfig tunes the delivery service.
type ServiceConfig struct {
	Config
	Backoff Backoff
	// MaxWorkers is how many deliveries a replica has in flight at once;
	// default DefaultWorkers.
	MaxWorkers int
	// PollInterval is how often River looks for due jobs without a
	// notification (retries, missed notifications); default 1s.
	PollInterval time.Duration
	// FetchCooldown is the least time between two of River's fetches of
	// due jobs; default 50ms. A fetch takes at most the free workers' worth of
	// jobs, so workers / cooldown bounds the deliveries a second (2,000 with
	// the defaults). A fetch after a quiet spell is not delayed; under load a
	// longer cooldown makes fewer, larger fetches: at 10ms, an owner with a
	// webhook at ~750 jobs/s cost 0.65 database round trips and 0.96 ms of
	// PostgreSQL CPU per job, at 50ms 0.51 and 0.88 (docs/performance.md).
	FetchCooldown time.Duration
	Log           *slog.Logger
}

// DefaultWorkers is how many deliveries a replica has in flight by default.
// River's own defaults (10 workers, a fetch at most every 100 ms) capped an
// owner at 100 events a second, and at 10 a second to an endpoint that takes
// a second to answer: measured with `routerbench -webhooks`, a backlog of
// events grew by ~900 a second while the router ran 1,000 jobs a second for
// that owner, and drained at 99 a second afterwards (docs/performance.md).
// A delivery waiting on its endpoint holds a goroutine, not a database
// connection.
const DefaultWorkers = 100

// Service is the River client that works deliveries on this replica.
type Service struct {
	client *river.Client[pgx.Tx]
	worker *Worker
}

// NewService builds the River client for pool (its search_path names the
// schema of River's tables). It warns (cfg.Log) of each configured secret
// without the whsec_ prefix: see rawSecretHelp.
func NewService(pool *pgxpool.Pool, st Store, cfg ServiceConfig) (*Service, error) {
	cfg.Backoff = cfg.Backoff.withDefaults()
	if cfg.MaxWorkers <= 0 {
		cfg.MaxWorkers = DefaultWorkers
	}
	if cfg.Client == nil {
		cfg.Client = newHTTPClient(cfg.MaxWorkers)
	}
	if cfg.FetchCooldown <= 0 {
		cfg.FetchCooldown = 50 * time.Millisecond
	}
	if cfg.PollInterval <= 0 {
		cfg.PollInterval = time.Second
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	warnRawSecrets(cfg.Log, cfg.Secrets, cfg.PreviousSecrets)
	workers := river.NewWorkers()
	w := NewWorker(st, cfg.Config)
	w.backoff = cfg.Backoff
	if err := river.AddWorkerSafely(workers, w); err != nil {
		return nil, err
	}
	c, err := river.NewClient(riverpgxv5.New(pool), &river.Config{
		Queues:            map[string]river.QueueConfig{Queue: {MaxWorkers: cfg.MaxWorkers}},
		Workers:           workers,
		RetryPolicy:       cfg.Backoff,
		FetchPollInterval: max(cfg.PollInterval, cfg.FetchCooldown),
		FetchCooldown:     cfg.FetchCooldown,
		JobTimeout:        w.Timeout(nil),
		// A delivery whose replica died is left "running"; River rescues it
		// after this. It must exceed the longest a live worker runs (a live
		// try is never rescued, so never delivered concurrently twice): its
		// job's timeout, w.Timeout, then the record of the try, which
		// outlives that context for at most recordTimeout. This leaves
		// webhooks.timeout + 10s beyond both.
		// River's rescuer looks every 30s, so a try cut off by a crash is
		// retried within about Timeout + 45s.
		RescueStuckJobsAfter: 2*w.Timeout(nil) + 5*time.Second,
		// River's job cleaner deletes its finished job rows after these
		// (docs/lifecycle.md, "Retention"). A delivery given up on ends
		// cancelled (river.JobCancel in Worker.Work), and River's default
		// for cancelled rows is 24 h: kept 7 days, like discarded ones, so
		// an abandoned delivery's River row can still be looked at during
		// the week after an outage. Completed rows: River's default, 24 h.
		CancelledJobRetentionPeriod: 7 * 24 * time.Hour,
		DiscardedJobRetentionPeriod: 7 * 24 * time.Hour,
		Logger:                      cfg.Log.With("component", "river"),
	})
	if err != nil {
		return nil, fmt.Errorf("webhook delivery client: %w", err)
	}
	return &Service{client: c, worker: w}, nil
}

// Start starts working deliveries.
func (s *Service) Start(ctx context.Context) error {
	s.worker.stopping.Store(false)
	if err := s.client.Start(ctx); err != nil {
		return fmt.Errorf("start webhook deliveries: %w", err)
	}
	return nil
}

// Stop stops fetching, lets tries in flight finish until ctx ends, then
// cancels them: each is recorded as interrupted by the shutdown, and River
// makes its job available again without counting the attempt.
func (s *Service) Stop(ctx context.Context) error {
	s.worker.stopping.Store(true)
	err := s.client.Stop(ctx)
	if ctx.Err() != nil {
		hard, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		return s.client.StopAndCancel(hard)
	}
	return err
}
