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

// hedgeDelays is, for the owner's jobs whose idempotency key starts with
// prefix, how long after the job's first attempt each hedge attempt was
// created (database clock): the hedge delay the router actually used.
func (d *DB) hedgeDelays(ctx context.Context, owner, prefix string) (Dist, error) {
	rows, err := d.pool.Query(ctx, `
SELECT extract(epoch FROM h.created_at - p.created_at)
FROM jobs j
JOIN attempts h ON h.job_id = j.id AND h.role = 'hedge'
JOIN attempts p ON p.job_id = j.id AND p.seq = 1
WHERE j.owner = $1 AND starts_with(j.idempotency_key, $2)`, owner, prefix)
	if err != nil {
		return nil, fmt.Errorf("hedge delays: %w", err)
	}
	defer rows.Close()
	var ds []time.Duration
	for rows.Next() {
		var secs float64
		if err := rows.Scan(&secs); err != nil {
			return nil, err
		}
		ds = append(ds, time.Duration(secs*float64(time.Second)))
	}
	return newDist(ds), rows.Err()
}
