package main

import (
	"context"
	"fmt"
	"log"
	"slices"
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
	// PerJob is the router's own counters' delta over the run divided by the
	// requests (jobs and chat only); CountersErr says why it is missing.
	PerJob      RouterCounters
	HaveCounter bool
	CountersErr string
	// CPU is the machine's CPU time over the run, split by process (nil when
	// /proc could not be read).
	CPU *CPUSplit
}

func (b *Bench) overheadSpec(name string) RouterSpec {
	s := RouterSpec{
		Name:      b.owner(name),
		Providers: []ProviderSpec{{Name: "primary", Model: "primary", Timeout: 30 * time.Second, MaxRetries: 1}},
		Route:     RouteSpec{Providers: []string{"primary"}},
	}
	if b.o.Webhooks {
		s.Webhook = b.h.Mock.WebhookURL()
	}
	return s
}

// overhead runs direct, /v1/jobs and /v1/chat/completions at each caller count
// against the mock's fixed latency, reading the router's counters around each
// router run.
func (b *Bench) overhead(ctx context.Context) error {
	m := b.h.Mock
	m.SetBehaviour(map[string]Behaviour{"primary": {Median: b.o.OverheadLatency}})
	mockBase := m.Webhooks()
	p, err := b.h.Start(ctx, b.overheadSpec("overhead"), false)
	if err != nil {
		return err
	}
	defer p.Stop()
	// Warm up connections (the pool grows to its size only under load, and
	// each new connection prepares its statements), prepared statements, the
	// heap and the tokenizer: at the largest caller count, as a router in
	// service is.
	warm := slices.Max(b.o.Concurrency)
	closedLoop(ctx, warm, max(100, 4*warm), b.o.MaxRun, func(ctx context.Context, i int) Sample {
		n := nonceFor("warm-"+b.runID, i)
		return b.c.Job(ctx, p, n, n, 0)
	})
	run := func(ep string, c, n int, prefix string) OverheadRow {
		row := b.measure(ctx, p, ep, ep != "direct", func() Run {
			return closedLoop(ctx, c, n, b.o.MaxRun, func(ctx context.Context, i int) Sample {
				nonce := nonceFor(prefix, i)
				switch ep {
				case "direct":
					return b.c.Direct(ctx, m.URL(), "primary", nonce)
				case "jobs":
					return b.c.Job(ctx, p, nonce, nonce, 0)
				}
				return b.c.Chat(ctx, p, nonce, nonce)
			})
		})
		log.Printf("  %-6s c=%-3d n=%d err=%d %.0f/s e2e p50 %s p99 %s  added p50 %s p99 %s ms  per job: %.2f round trips, %.2f durable commits",
			ep, c, row.N, row.Errors, row.RPS, ms(row.E2E.Q(.5)), ms(row.E2E.Q(.99)),
			ms(row.Added.Q(.5)), ms(row.Added.Q(.99)), row.PerJob.RoundTrips, row.PerJob.DurableCommits)
		return row
	}
	for _, c := range b.o.Concurrency {
		n := b.o.OverheadN
		if c == 1 {
			n = b.o.OverheadN1
		}
		for _, ep := range roundOrder(0) {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			b.rep.Overhead = append(b.rep.Overhead, run(ep, c, n, fmt.Sprintf("ovh-%s-%s-c%d", b.runID, ep, c)))
		}
	}
	if slices.Contains(b.o.Concurrency, spec14Callers) {
		first := OverheadRound{Order: roundOrder(0)}
		for _, ep := range first.Order {
			x, _ := b.rep.row(ep, spec14Callers)
			first.Rows = append(first.Rows, x)
		}
		b.rep.Rounds = append(b.rep.Rounds, first)
		for i := 1; i < b.o.OverheadRounds; i++ {
			log.Printf("  round %d of %d at %d callers", i+1, b.o.OverheadRounds, spec14Callers)
			round := OverheadRound{Order: roundOrder(i)}
			for _, ep := range round.Order {
				if ctx.Err() != nil {
					return ctx.Err()
				}
				round.Rows = append(round.Rows, run(ep, spec14Callers, b.o.OverheadN, fmt.Sprintf("ovh-%s-%s-r%d", b.runID, ep, i+1)))
			}
			b.rep.Rounds = append(b.rep.Rounds, round)
		}
	}
	if b.o.Webhooks {
		b.drainWebhooks(ctx, p.Owner, mockBase)
	}
	in, err := b.db.integrity(ctx, p.Owner)
	if err != nil {
		return err
	}
	b.rep.checkIntegrity("overhead", in)
	return nil
}

// measure runs load and returns its row, with the machine's CPU split over it
// and, when counters, the router's own counters per request.
func (b *Bench) measure(ctx context.Context, p *RouterProc, ep string, counters bool, load func() Run) OverheadRow {
	var before RouterCounters
	var cerr error
	if counters {
		before, cerr = p.Counters(ctx)
	}
	cpuBefore, cpuErr := sampleCPU()
	r := load()
	cpuAfter, err := sampleCPU()
	row := b.overheadRow(ep, r)
	if cpuErr == nil && err == nil {
		d := cpuAfter.Sub(cpuBefore)
		row.CPU = &d
	}
	if !counters {
		return row
	}
	var after RouterCounters
	if cerr == nil {
		after, cerr = p.Counters(ctx)
	}
	if cerr != nil {
		row.CountersErr = cerr.Error()
	} else {
		row.PerJob, row.HaveCounter = after.Sub(before).PerJob(row.N), true
	}
	return row
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
	return row
}

// row finds the overhead row of an endpoint at a caller count.
func (r *Report) row(ep string, callers int) (OverheadRow, bool) {
	for _, x := range r.Overhead {
		if x.Endpoint == ep && x.Callers == callers {
			return x, true
		}
	}
	return OverheadRow{}, false
}

// drainWebhooks logs how far River's deliveries lagged behind the load and
// how fast the rest went once the load ended (bounded by twice -max-run).
func (b *Bench) drainWebhooks(ctx context.Context, owner string, base int64) {
	d := b.drain(ctx, owner, base, 0)
	log.Printf("  webhooks: %d events; the mock had taken %d when the load ended, %d in all %s later %s",
		d.Events, d.AtEnd, d.Delivered, d.Took.Round(time.Millisecond), d.Err)
}
