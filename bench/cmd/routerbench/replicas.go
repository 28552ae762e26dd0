package main

import (
	"context"
	"fmt"
	"log"
)

// ReplicasResult is two router processes serving one deployment (one owner)
// on one database.
type ReplicasResult struct {
	Callers, N, Errors int
	RPS                float64
	Added              Dist
	PerJob             RouterCounters // both replicas' counters summed, per job
	// The cross-replica duplicate burst: every key sent DupRepeats times at
	// once, alternately to each replica.
	DupKeys, DupRepeats, DupRequests, DupErrors int
	ClientSplit                                 int // keys answered with more than one job id
	In                                          Integrity
}

// replicas runs /v1/jobs through two routers on the same database, the
// callers alternating between them, then sends every key of a burst to both
// at once, and checks in the database that no key got two jobs and no job two
// wins.
func (b *Bench) replicas(ctx context.Context) error {
	m := b.h.Mock
	m.SetBehaviour(map[string]Behaviour{"primary": {Median: b.o.OverheadLatency}})
	owner := b.owner("replicas")
	var ps [2]*RouterProc
	for i := range ps {
		spec := b.overheadSpec(fmt.Sprintf("replica%d", i+1))
		spec.Owner = owner
		p, err := b.h.Start(ctx, spec, false)
		if err != nil {
			return err
		}
		defer p.Stop()
		ps[i] = p
	}
	closedLoop(ctx, 8, 100, b.o.MaxRun, func(ctx context.Context, i int) Sample {
		n := nonceFor("rwarm-"+b.runID, i)
		return b.c.Job(ctx, ps[i%2], n, n, 0)
	})
	counters := func() (RouterCounters, error) {
		var sum RouterCounters
		for _, p := range ps {
			c, err := p.Counters(ctx)
			if err != nil {
				return sum, err
			}
			sum = sum.Add(c)
		}
		return sum, nil
	}
	before, err := counters()
	if err != nil {
		return err
	}
	prefix := "repl-" + b.runID
	r := closedLoop(ctx, b.o.ReplicaCallers, b.o.ReplicaN, b.o.MaxRun, func(ctx context.Context, i int) Sample {
		n := nonceFor(prefix, i)
		return b.c.Job(ctx, ps[i%2], n, n, 0)
	})
	after, err := counters()
	if err != nil {
		return err
	}
	row := b.overheadRow("jobs", r)
	res := &ReplicasResult{Callers: r.Callers, N: row.N, Errors: row.Errors, RPS: row.RPS, Added: row.Added,
		PerJob: after.Sub(before).PerJob(row.N), DupKeys: b.o.ReplicaDupKeys, DupRepeats: b.o.ReplicaDupRepeats}
	// The duplicate burst: repeats of a key are consecutive request numbers, so
	// concurrent callers send them together, alternating replicas.
	dprefix := "repl-dup-" + b.runID
	total := res.DupKeys * res.DupRepeats
	d := closedLoop(ctx, b.o.ReplicaCallers, total, b.o.MaxRun, func(ctx context.Context, i int) Sample {
		key := nonceFor(dprefix, i/res.DupRepeats)
		return b.c.Job(ctx, ps[i%2], key, key, 0)
	})
	res.DupRequests, res.DupErrors = len(d.Samples), d.Errors()
	res.ClientSplit = clientSplit(d)
	in, err := b.db.integrity(ctx, owner)
	if err != nil {
		return err
	}
	res.In = in
	b.rep.checkIntegrity("two replicas", in)
	if res.ClientSplit > 0 {
		b.rep.Problems = append(b.rep.Problems, fmt.Sprintf("two replicas: %d keys answered with more than one job id", res.ClientSplit))
	}
	b.rep.Replicas = res
	log.Printf("  replicas: %d jobs (%d errors) %.0f/s, added p50 %s p99 %s ms; duplicate burst %d requests, %d keys split; db: %d duplicate keys, %d double wins",
		res.N, res.Errors, res.RPS, ms(res.Added.Q(.5)), ms(res.Added.Q(.99)), res.DupRequests, res.ClientSplit, in.DupKeys, in.DoubleWins)
	return nil
}

// clientSplit counts keys whose answers named more than one job id.
func clientSplit(r Run) int {
	ids := map[string]map[string]bool{}
	for _, s := range r.Samples {
		if s.JobID == "" {
			continue
		}
		if ids[s.Key] == nil {
			ids[s.Key] = map[string]bool{}
		}
		ids[s.Key][s.JobID] = true
	}
	n := 0
	for _, set := range ids {
		if len(set) > 1 {
			n++
		}
	}
	return n
}
