package main

import (
	"context"
	"fmt"
	"log"
	"time"
)

// StormRow is one endpoint's duplicate storm.
type StormRow struct {
	Endpoint       string
	Keys, Requests int
	Errors         int
	Replayed       int
	Jobs           int64   // jobs in the database
	JobsPerKey     float64 // must be 1
	DupKeys        int64   // keys with more than one job: must be 0
	ClientSplit    int     // keys whose answers named more than one job id: must be 0
	DoubleWins     int64
	CallsPerJob    float64
	E2E            Dist
	RPS            float64
}

// storm sends every key from many callers at once (repeats of a key are
// consecutive, so the callers send them concurrently), then once more after
// the job is done.
func (b *Bench) storm(ctx context.Context) error {
	m := b.h.Mock
	m.SetBehaviour(map[string]Behaviour{"primary": {Median: b.o.Median, Sigma: b.o.Sigma}})
	for _, ep := range []string{"jobs", "chat"} {
		spec := b.overheadSpec("storm-" + ep)
		p, err := b.h.Start(ctx, spec, false)
		if err != nil {
			return err
		}
		m.Reset()
		keys, reps := b.o.StormKeys, b.o.StormRepeats
		total := keys * (reps + 1)
		prefix := fmt.Sprintf("storm-%s-%s", b.runID, ep)
		r := closedLoop(ctx, b.o.StormCallers, total, b.o.MaxRun, func(ctx context.Context, i int) Sample {
			k := i / reps
			if i >= keys*reps { // the late replays, after the storm
				k = i - keys*reps
			}
			key := nonceFor(prefix, k)
			if ep == "jobs" {
				return b.c.Job(ctx, p, key, key, 0)
			}
			return b.c.Chat(ctx, p, key, key)
		})
		// Attempts cancelled by nothing finish quickly; give stragglers a moment.
		time.Sleep(200 * time.Millisecond)
		in, err := b.db.integrity(ctx, p.Owner)
		p.Stop()
		if err != nil {
			return err
		}
		b.rep.checkIntegrity("storm "+ep, in)
		row := StormRow{Endpoint: ep, Keys: keys, Requests: len(r.Samples), Errors: r.Errors(), Jobs: in.Jobs,
			DupKeys: in.DupKeys, DoubleWins: in.DoubleWins, E2E: latencies(r, true), RPS: r.Throughput()}
		for _, s := range r.Samples {
			if s.Replayed {
				row.Replayed++
			}
		}
		row.ClientSplit = clientSplit(r)
		if in.Keys > 0 {
			row.JobsPerKey = float64(in.Jobs) / float64(in.Keys)
		}
		if in.Jobs > 0 {
			row.CallsPerJob = float64(m.TotalCalls()) / float64(in.Jobs)
		}
		if row.ClientSplit > 0 {
			b.rep.Problems = append(b.rep.Problems, fmt.Sprintf("storm %s: %d keys answered with more than one job id", ep, row.ClientSplit))
		}
		b.rep.Storm = append(b.rep.Storm, row)
		log.Printf("  storm %s: %d requests, %d keys, %d jobs (%.3f per key), %d replayed, %.3f calls/job, %d errors",
			ep, row.Requests, keys, row.Jobs, row.JobsPerKey, row.Replayed, row.CallsPerJob, row.Errors)
	}
	return nil
}
