package main

import (
	"context"
	"fmt"
	"log"
)

// SustainedRow is one round of the sustained scenario.
type SustainedRow struct {
	Round     int
	Endpoint  string
	JobsAfter int // jobs in the router's tables when the round ended (this router's owner)
	Row       OverheadRow
}

// sustained runs /v1/jobs at the profile's caller count for several rounds in
// a row on one router, as its tables grow, and reports each round: a router
// whose statements slow down as tables grow (stale statistics, bloated
// partial indexes) shows it here as falling throughput, where a single run
// looks like noise.
func (b *Bench) sustained(ctx context.Context) error {
	m := b.h.Mock
	m.SetBehaviour(map[string]Behaviour{"primary": {Median: b.o.OverheadLatency}})
	p, err := b.h.Start(ctx, b.overheadSpec("sustained"), false)
	if err != nil {
		return err
	}
	defer p.Stop()
	c := b.o.ProfileCallers
	closedLoop(ctx, c, 4*c, b.o.MaxRun, func(ctx context.Context, i int) Sample {
		n := nonceFor("sus-warm-"+b.runID, i)
		return b.c.Job(ctx, p, n, n, 0)
	})
	total := 0
	for round := 1; round <= b.o.SustainedRounds; round++ {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		prefix := fmt.Sprintf("sus-%s-r%d", b.runID, round)
		r := closedLoop(ctx, c, b.o.OverheadN, b.o.MaxRun, func(ctx context.Context, i int) Sample {
			nonce := nonceFor(prefix, i)
			return b.c.Job(ctx, p, nonce, nonce, 0)
		})
		row := b.overheadRow("jobs", r)
		total += row.N
		b.rep.Sustained = append(b.rep.Sustained, SustainedRow{Round: round, Endpoint: "jobs", JobsAfter: total, Row: row})
		log.Printf("  round %d: %d jobs so far, %.0f/s, added p50 %s p99 %s ms", round, total, row.RPS, ms(row.Added.Q(.5)), ms(row.Added.Q(.99)))
	}
	in, err := b.db.integrity(ctx, p.Owner)
	if err != nil {
		return err
	}
	b.rep.checkIntegrity("sustained", in)
	return nil
}

func (b *Bench) writeSustained(m *md) {
	rows := b.rep.Sustained
	if len(rows) == 0 {
		return
	}
	m.p("## 7. Sustained load")
	m.p("")
	m.p("One router, `/v1/jobs` at %d callers against the %s mock, %d rounds of %d jobs back to back on a database that starts empty: the tables grow by every round. A router whose statements slow down as its tables grow shows it here as falling throughput.", b.o.ProfileCallers, b.o.OverheadLatency, b.o.SustainedRounds, b.o.OverheadN)
	m.p("")
	m.p("| round | jobs in the tables after it | req/s | vs round 1 | added p50 | added p99 |")
	m.p("|---:|---:|---:|---:|---:|---:|")
	for _, r := range rows {
		m.p("| %d | %d | %.0f | %.0f%% | %s | %s |", r.Round, r.JobsAfter, r.Row.RPS, 100*r.Row.RPS/rows[0].Row.RPS, ms(r.Row.Added.Q(.5)), ms(r.Row.Added.Q(.99)))
	}
	m.p("")
}
