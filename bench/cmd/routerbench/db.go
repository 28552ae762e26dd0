package main

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
)

// DB reads the router's tables and PostgreSQL's statistics.
type DB struct{ pool *pgxpool.Pool }

func openDB(ctx context.Context, url string) (*DB, error) {
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, err
	}
	cfg.MaxConns = 2
	p, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, err
	}
	return &DB{pool: p}, nil
}

// Counters are cumulative database statistics.
type Counters struct {
	Commits   int64 // pg_stat_database.xact_commit
	WALSyncs  int64 // pg_stat_wal.wal_sync (fsyncs of the WAL)
	WALWrites int64 // pg_stat_wal.wal_records
}

func (c Counters) Sub(o Counters) Counters {
	return Counters{c.Commits - o.Commits, c.WALSyncs - o.WALSyncs, c.WALWrites - o.WALWrites}
}

// counters reads the statistics, after waiting settle for backends to flush
// theirs (PostgreSQL publishes a backend's counts at most once a second, and an
// idle backend's within about ten).
func (d *DB) counters(ctx context.Context, settle time.Duration) (Counters, error) {
	time.Sleep(settle)
	conn, err := d.pool.Acquire(ctx)
	if err != nil {
		return Counters{}, err
	}
	defer conn.Release()
	var c Counters
	if _, err := conn.Exec(ctx, "SELECT pg_stat_clear_snapshot()"); err != nil {
		return c, err
	}
	if err := conn.QueryRow(ctx, "SELECT xact_commit FROM pg_stat_database WHERE datname = current_database()").Scan(&c.Commits); err != nil {
		return c, err
	}
	// pg_stat_wal exists from PostgreSQL 14; without it the WAL columns stay 0.
	_ = conn.QueryRow(ctx, "SELECT wal_sync, wal_records FROM pg_stat_wal").Scan(&c.WALSyncs, &c.WALWrites)
	return c, nil
}

// Integrity is what the database says about one owner's jobs.
type Integrity struct {
	Jobs        int64
	Keys        int64 // distinct idempotency keys
	DupKeys     int64 // keys with more than one job
	DoubleWins  int64 // jobs with more than one won attempt
	Attempts    int64
	Succeeded   int64
	Unknown     int64
	Failed      int64
	Hedges      int64
	Lost        int64
	CancelledAt int64 // attempts cancelled (hedge losers)
}

func (d *DB) integrity(ctx context.Context, owner string) (Integrity, error) {
	var in Integrity
	err := d.pool.QueryRow(ctx, `
SELECT count(*), count(DISTINCT (operation, idempotency_key)),
       count(*) FILTER (WHERE state = 'succeeded'), count(*) FILTER (WHERE state = 'unknown'),
       count(*) FILTER (WHERE state = 'failed')
FROM jobs WHERE owner = $1`, owner).Scan(&in.Jobs, &in.Keys, &in.Succeeded, &in.Unknown, &in.Failed)
	if err != nil {
		return in, fmt.Errorf("count jobs: %w", err)
	}
	err = d.pool.QueryRow(ctx, `
SELECT count(*) FROM (SELECT 1 FROM jobs WHERE owner = $1
  GROUP BY operation, idempotency_key HAVING count(*) > 1) x`, owner).Scan(&in.DupKeys)
	if err != nil {
		return in, fmt.Errorf("count duplicates: %w", err)
	}
	err = d.pool.QueryRow(ctx, `
SELECT count(*), count(*) FILTER (WHERE a.role = 'hedge'), count(*) FILTER (WHERE a.state = 'lost'),
       count(*) FILTER (WHERE a.state = 'cancelled')
FROM attempts a JOIN jobs j ON j.id = a.job_id WHERE j.owner = $1`, owner).Scan(&in.Attempts, &in.Hedges, &in.Lost, &in.CancelledAt)
	if err != nil {
		return in, fmt.Errorf("count attempts: %w", err)
	}
	err = d.pool.QueryRow(ctx, `
SELECT count(*) FROM (SELECT a.job_id FROM attempts a JOIN jobs j ON j.id = a.job_id
  WHERE j.owner = $1 AND a.state = 'won' GROUP BY a.job_id HAVING count(*) > 1) x`, owner).Scan(&in.DoubleWins)
	if err != nil {
		return in, fmt.Errorf("count double wins: %w", err)
	}
	return in, nil
}
