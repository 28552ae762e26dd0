package main

import (
	"context"
	"fmt"
	"log"
	"sort"
	"time"
)

// OverheadRow is one endpoint at one caller count.
type OverheadRow struct {
	Endpoint string // direct, jobs, chat
	Callers  int
	N        int
	Errors   int
	RPS      float64
	E2E      Dist // what the caller saw
	Own      Dist // the mock's own time for the same calls
	Added    Dist // router-added: E2E minus the mock's own time, per request
	TimedOut bool
}

func (b *Bench) overheadSpec(name string) RouterSpec {
	return RouterSpec{
		Name:      b.owner(name),
		Providers: []ProviderSpec{{Name: "primary", Model: "primary", Timeout: 30 * time.Second, MaxRetries: 1}},
		Route:     RouteSpec{Providers: []string{"primary"}},
	}
}

func (b *Bench) overhead(ctx context.Context) error {
	m := b.h.Mock
	m.SetBehaviour(map[string]Behaviour{"primary": {Median: b.o.OverheadLatency}})
	p, err := b.h.Start(ctx, b.overheadSpec("overhead"), false)
	if err != nil {
		return err
	}
	defer p.Stop()
	// Warm up connections, prepared statements and the tokenizer.
	closedLoop(ctx, 4, 100, b.o.MaxRun, func(ctx context.Context, i int) Sample {
		n := nonceFor("warm-"+b.runID, i)
		return b.c.Job(ctx, p, n, n, 0)
	})
	for _, c := range b.o.Concurrency {
		n := b.o.OverheadN
		if c == 1 {
			n = b.o.OverheadN1
		}
		for _, ep := range []string{"direct", "jobs", "chat"} {
			prefix := fmt.Sprintf("ovh-%s-%s-c%d", b.runID, ep, c)
			r := closedLoop(ctx, c, n, b.o.MaxRun, func(ctx context.Context, i int) Sample {
				nonce := nonceFor(prefix, i)
				switch ep {
				case "direct":
					return b.c.Direct(ctx, m.URL(), "primary", nonce)
				case "jobs":
					return b.c.Job(ctx, p, nonce, nonce, 0)
				}
				return b.c.Chat(ctx, p, nonce, nonce)
			})
			row := b.overheadRow(ep, r)
			b.rep.Overhead = append(b.rep.Overhead, row)
			log.Printf("  %-6s c=%-3d n=%d err=%d %.0f/s e2e p50 %s p99 %s  added p50 %s p90 %s p99 %s ms",
				ep, c, row.N, row.Errors, row.RPS, ms(row.E2E.Q(.5)), ms(row.E2E.Q(.99)),
				ms(row.Added.Q(.5)), ms(row.Added.Q(.9)), ms(row.Added.Q(.99)))
		}
	}
	in, err := b.db.integrity(ctx, p.Owner)
	if err != nil {
		return err
	}
	b.rep.checkIntegrity("overhead", in)
	return nil
}

func (b *Bench) overheadRow(ep string, r Run) OverheadRow {
	row := OverheadRow{Endpoint: ep, Callers: r.Callers, N: len(r.Samples), Errors: r.Errors(), RPS: r.Throughput(), TimedOut: r.TimedOut}
	var e2e, own, added []time.Duration
	for _, s := range r.Samples {
		if !s.OK() {
			continue
		}
		e2e = append(e2e, s.Latency)
		if d, ok := b.h.Mock.Service(s.Nonce); ok {
			own = append(own, d)
			added = append(added, s.Latency-d)
		}
	}
	row.E2E, row.Own, row.Added = newDist(e2e), newDist(own), newDist(added)
	sort.Float64s(row.Added)
	return row
}
