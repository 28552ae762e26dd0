package main

import (
	"context"
	"fmt"
	"log"
	"time"

	"github.com/jackc/pgx/v5"
)

// FloorResult is the durable-commit floor: what the commits a job cannot avoid
// cost on this disk, measured on the bench's own database before the load.
type FloorResult struct {
	Commits int           // durable commits per job on the path (SPEC §14: 2)
	N       int           // measured sequences
	One     Dist          // one autocommitted INSERT, synchronous_commit = on
	Path    Dist          // Commits of them back to back: the floor
	Setting string        // synchronous_commit as the connection saw it
	Elapsed time.Duration // how long the measurement took
}

// floor times, on one connection with synchronous_commit = on, sequences of
// Commits autocommitted single-row INSERTs into a logged table (each one WAL
// flush, nothing else), and reports the medians. It is the cost a lone
// caller's job pays before any router work: the 1-caller target is
// router-added p50 ≤ this + 1 ms.
func (b *Bench) floor(ctx context.Context) error {
	start := time.Now()
	conn, err := pgx.Connect(ctx, b.h.DB)
	if err != nil {
		return err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	const table = "routerbench_floor"
	if _, err := conn.Exec(ctx, "SET synchronous_commit = on"); err != nil {
		return err
	}
	if _, err := conn.Exec(ctx, "DROP TABLE IF EXISTS "+table+"; CREATE TABLE "+table+" (id bigint PRIMARY KEY, note text NOT NULL)"); err != nil {
		return fmt.Errorf("create %s: %w", table, err)
	}
	defer func() { _, _ = conn.Exec(context.WithoutCancel(ctx), "DROP TABLE IF EXISTS "+table) }()
	res := &FloorResult{Commits: b.o.FloorCommits, N: b.o.FloorN}
	if err := conn.QueryRow(ctx, "SHOW synchronous_commit").Scan(&res.Setting); err != nil {
		return err
	}
	insert := func(id int64) (time.Duration, error) {
		t := time.Now()
		_, err := conn.Exec(ctx, "INSERT INTO "+table+" (id, note) VALUES ($1, 'floor')", id)
		return time.Since(t), err
	}
	id := int64(0)
	for range 20 { // warm-up: the prepared statement, the table's first pages
		id++
		if _, err := insert(id); err != nil {
			return err
		}
	}
	var one, path []time.Duration
	deadline := time.Now().Add(b.o.MaxRun)
	for i := 0; i < res.N && time.Now().Before(deadline); i++ {
		var sum time.Duration
		for c := 0; c < res.Commits; c++ {
			id++
			d, err := insert(id)
			if err != nil {
				return err
			}
			one = append(one, d)
			sum += d
		}
		path = append(path, sum)
	}
	res.One, res.Path, res.Elapsed = newDist(one), newDist(path), time.Since(start)
	b.rep.Floor = res
	log.Printf("  floor: one durable commit p50 %s ms, %d commits p50 %s ms (synchronous_commit=%s, %d sequences)",
		ms(res.One.Q(.5)), res.Commits, ms(res.Path.Q(.5)), res.Setting, len(path))
	return nil
}
