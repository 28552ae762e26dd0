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
	Commits int  // durable commits per job on the path (SPEC §14: 2)
	N       int  // measured sequences
	One     Dist // one autocommitted INSERT, synchronous_commit = on
	Path    Dist // Commits of them back to back: the disk's best case
	// OnPath is Commits of them as a job's commits fall on its path: apart by
	// the provider's latency (the mock's, in the overhead scenario), the
	// second one issued to a database and a machine that sat idle meanwhile.
	// It is the floor the 1-caller target adds 1 ms to.
	OnPath Dist
	Gap    time.Duration // the idle time between commits in OnPath
	// Claim, Win and Statements (their sum per job) are the router's own two
	// commits, timed through internal/store like OnPath (see statements).
	Claim, Win, Statements Dist
	Setting                string        // synchronous_commit as the connection saw it
	Elapsed                time.Duration // how long the measurement took
}

// floor times, on one connection with synchronous_commit = on, sequences of
// Commits autocommitted single-row INSERTs into a logged table (each one WAL
// flush, nothing else), and reports the medians: back to back (the disk's best
// case), and apart by the provider's latency, as a job's commits are (the
// claim before the provider call, the win after it). The latter is the cost a
// lone caller's job pays before any router work: the 1-caller target is
// router-added p50 ≤ it + 1 ms.
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
	// As on a job's path: the commits apart by the provider's latency.
	res.Gap = b.o.OverheadLatency
	var onPath []time.Duration
	for i := 0; i < res.N/2 && time.Now().Before(deadline.Add(b.o.MaxRun)); i++ {
		var sum time.Duration
		for c := 0; c < res.Commits; c++ {
			if c > 0 {
				time.Sleep(res.Gap) // the provider call between the claim and the win
			}
			id++
			d, err := insert(id)
			if err != nil {
				return err
			}
			sum += d
		}
		onPath = append(onPath, sum)
	}
	res.One, res.Path, res.OnPath = newDist(one), newDist(path), newDist(onPath)
	b.rep.Floor = res // the floor stands even if the next measurement fails
	if err := b.statements(ctx, conn, res, deadline.Add(2*b.o.MaxRun)); err != nil {
		b.rep.Problems = append(b.rep.Problems, "floor: the router's own commits: "+err.Error())
	}
	res.Elapsed = time.Since(start)
	log.Printf("  floor: one durable commit p50 %s ms, %d commits p50 %s ms back to back, %s ms %s apart (synchronous_commit=%s, %d sequences); the router's claim and win %s apart: %s + %s ms",
		ms(res.One.Q(.5)), res.Commits, ms(res.Path.Q(.5)), ms(res.OnPath.Q(.5)), res.Gap, res.Setting, len(path), res.Gap, ms(res.Claim.Q(.5)), ms(res.Win.Q(.5)))
	return nil
}
