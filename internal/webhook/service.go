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
	// MaxInflightPerOwner is how many of those one owner's deliveries may
	// take at once (webhooks.max_inflight_per_owner), 1 to MaxWorkers;
	// default a quarter of MaxWorkers, at least 1. All owners share one River
	// queue: without it an owner whose endpoint does not answer held every
	// worker for webhooks.timeout per try, and every other owner's events
	// waited. A delivery over the limit is snoozed (Worker.Work), and so is
	// one whose owner has a delivery in flight while only the reserve of
	// workers for owners with none is free (ownerReserve).
	MaxInflightPerOwner int
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
	// Log gets River's lines and the worker's: a failed try at info, an
	// abandoned event at warn.
	Log *slog.Logger
	// Observer counts each recorded try's outcome; optional.
	Observer Observer
}

// MaxTimeout is the longest webhooks.timeout (config.MaxWebhookTimeout; a
// test keeps the two equal). River's rescuer runs only on River's leader, with
// that replica's configuration, so the rescue of a try still running must not
// depend on any replica's own timeout: it is rescueStuckAfter, from this
// bound.
const MaxTimeout = 2 * time.Minute

// rescueStuckAfter is River's RescueStuckJobsAfter for deliveries: a try
// still "running" this long after it started is taken for one whose replica
// died, and is made available again. It must exceed the longest a live
// worker runs on any replica — its job's timeout (Worker.Timeout, at most
// MaxTimeout + 10s), then the record of the try (recordTimeout) — or a try
// still running would be tried a second time at once. 2×MaxTimeout + 1m
// leaves 2m45s beyond that; River's rescuer looks every 30s, so a try cut off
// by a crash is retried within about 5m30s. The rescuer decides on its
// leader's clock, though: the send itself is fenced by the event's send
// lease, on the database clock (Worker.sendLease), so a rescue too early (a
// leader whose clock runs ahead) costs the rescued try a snooze, not a second
// send.
const rescueStuckAfter = 2*MaxTimeout + time.Minute

// DefaultWorkers is how many deliveries a replica has in flight by default.
// River's own defaults (10 workers, a fetch at most every 100 ms) capped an
// owner at 100 events a second, and at 10 a second to an endpoint that takes
// a second to answer: measured with `routerbench -webhooks`, a backlog of
// events grew by ~900 a second while the router ran 1,000 jobs a second for
// that owner, and drained at 99 a second afterwards (docs/performance.md).
// A delivery waiting on its endpoint holds a goroutine, not a database
// connection.
const DefaultWorkers = 100

// ownerReserve is how many of a replica's workers owners with a delivery in
// flight leave to owners with none (ownerSlots): a quarter of them, at least
// one, like the default of webhooks.max_inflight_per_owner: by default three
// owners at their limit still fit beside it, and it takes 28 owners whose
// endpoints hang to hold all 100 workers (three at their limit of 25, then
// 25 with one each), where 4 did without it. It is less when
// webhooks.max_inflight_per_owner is set so high that an owner could not
// otherwise reach it: raised to webhooks.workers (one tenant with a slow
// endpoint), the limit says one owner may have every worker, and there is no
// reserve. A reserve costs throughput only when the workers are nearly all
// busy, with owners that already have deliveries in flight.
func ownerReserve(workers, perOwner int) int {
	return max(0, min(max(1, workers/4), workers-perOwner))
}

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
	if cfg.MaxInflightPerOwner <= 0 {
		cfg.MaxInflightPerOwner = max(1, cfg.MaxWorkers/4)
	}
	if cfg.MaxInflightPerOwner > cfg.MaxWorkers {
		return nil, fmt.Errorf("webhook deliveries: %d in flight per owner is more than the %d workers", cfg.MaxInflightPerOwner, cfg.MaxWorkers)
	}
	if cfg.Timeout > MaxTimeout {
		return nil, fmt.Errorf("webhook deliveries: a timeout of %s is longer than %s, which River's rescue of stuck tries allows for", cfg.Timeout, MaxTimeout)
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	warnRawSecrets(cfg.Log, cfg.Secrets, cfg.PreviousSecrets)
	workers := river.NewWorkers()
	w := NewWorker(st, cfg.Config)
	w.setBackoff(cfg.Backoff) // told of the worker's clock offset and receivers' Retry-After
	w.log, w.observer = cfg.Log, cfg.Observer
	w.owners.limit = cfg.MaxInflightPerOwner
	w.owners.shared = cfg.MaxWorkers - ownerReserve(cfg.MaxWorkers, cfg.MaxInflightPerOwner)
	if err := river.AddWorkerSafely(workers, w); err != nil {
		return nil, err
	}
	c, err := river.NewClient(riverpgxv5.New(pool), riverConfig(cfg, workers, w))
	if err != nil {
		return nil, fmt.Errorf("webhook delivery client: %w", err)
	}
	return &Service{client: c, worker: w}, nil
}

// riverConfig is the River client's configuration for cfg (with its defaults
// filled) and the delivery worker w, registered in workers.
func riverConfig(cfg ServiceConfig, workers *river.Workers, w *Worker) *river.Config {
	return &river.Config{
		Queues:            map[string]river.QueueConfig{Queue: {MaxWorkers: cfg.MaxWorkers}},
		Workers:           workers,
		RetryPolicy:       w.backoff,
		FetchPollInterval: max(cfg.PollInterval, cfg.FetchCooldown),
		FetchCooldown:     cfg.FetchCooldown,
		JobTimeout:        w.Timeout(nil),
		// A delivery whose replica died is left "running"; River rescues it
		// after this (rescueStuckAfter), on River's leader, whichever replica
		// that is: the same on every replica, whatever its webhooks.timeout.
		RescueStuckJobsAfter: rescueStuckAfter,
		// River's job cleaner deletes its finished job rows after these
		// (docs/lifecycle.md, "Retention"). A delivery given up on ends
		// cancelled (river.JobCancel in Worker.Work), and River's default
		// for cancelled rows is 24 h: kept 7 days, like discarded ones, so
		// an abandoned delivery's River row can still be looked at during
		// the week after an outage. Completed rows: River's default, 24 h.
		CancelledJobRetentionPeriod: 7 * 24 * time.Hour,
		DiscardedJobRetentionPeriod: 7 * 24 * time.Hour,
		Logger:                      cfg.Log.With("component", "river"),
	}
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
// makes its job available again without counting the attempt. Then it closes
// the delivery client's idle connections: kept, each held a connection to a
// webhook endpoint and two goroutines for up to 90 s after the service
// stopped (net/http's idle timeout), up to webhooks.workers per endpoint. A
// try still running after StopAndCancel gave up keeps its connection.
func (s *Service) Stop(ctx context.Context) error {
	s.worker.stopping.Store(true)
	defer s.worker.cfg.Client.CloseIdleConnections()
	err := s.client.Stop(ctx)
	if ctx.Err() != nil {
		hard, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		return s.client.StopAndCancel(hard)
	}
	return err
}
