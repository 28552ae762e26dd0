package main

import (
	"context"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
)

// goBench is the pgbench fallback: the same script as pgbenchScript, run by
// PgbenchClients goroutines with pgx for PgbenchFor.
func (b *Bench) goBench(ctx context.Context, res *CeilingResult) error {
	cfg, err := pgxpool.ParseConfig(b.h.DB)
	if err != nil {
		return err
	}
	cfg.MaxConns = int32(b.o.PgbenchClients)
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return err
	}
	defer pool.Close()
	var jobs atomic.Int64
	var firstErr atomic.Value
	stop := time.Now().Add(b.o.PgbenchFor)
	start := time.Now()
	var wg sync.WaitGroup
	for range b.o.PgbenchClients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for time.Now().Before(stop) && ctx.Err() == nil {
				id := rand.Int64N(1_000_000_000)
				for step := range res.ScriptWrites {
					tx, err := pool.Begin(ctx)
					if err == nil {
						_, err = tx.Exec(ctx, `INSERT INTO bench_jobs (id, step, payload) VALUES ($1, $2, '{"state":"running"}') ON CONFLICT (id, step) DO NOTHING`, id, step)
					}
					if err == nil {
						_, err = tx.Exec(ctx, `UPDATE bench_jobs SET version = version + 1, payload = '{"state":"succeeded"}' WHERE id = $1 AND step = $2`, id, step)
					}
					if err == nil {
						err = tx.Commit(ctx)
					}
					if err != nil {
						firstErr.CompareAndSwap(nil, err)
						return
					}
				}
				for range res.ScriptReads {
					var v int64
					var p []byte
					_ = pool.QueryRow(ctx, `SELECT version, payload FROM bench_jobs WHERE id = $1 AND step = 0`, id).Scan(&v, &p)
				}
				jobs.Add(1)
			}
		}()
	}
	wg.Wait()
	if e, ok := firstErr.Load().(error); ok {
		return e
	}
	res.PgbenchJobsPerSec = float64(jobs.Load()) / time.Since(start).Seconds()
	res.PgbenchCommitsPerS = res.PgbenchJobsPerSec * float64(res.ScriptWrites+res.ScriptReads)
	return nil
}
