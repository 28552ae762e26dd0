package main

import (
	"context"
	"fmt"
	"log"
	"time"
)

// WebhooksResult is the webhooks scenario: /v1/jobs for an owner with a
// webhook, so every job also makes a completion event that River delivers to
// the mock while the load runs.
type WebhooksResult struct {
	Row OverheadRow // the load, with the router's counters (deliveries included) and the CPU split
	Drain
}

// Drain says how far the deliveries lagged behind the load.
type Drain struct {
	Events    int64         // the owner's completion events after the load
	AtEnd     int64         // delivered when the load ended
	Delivered int64         // delivered in all, once drained or given up
	Took      time.Duration // from the load's end until the last delivery (or giving up)
	Err       string
}

// webhooks runs the overhead scenario's /v1/jobs load at the profile's caller
// count for an owner with a webhook: what an owner with webhooks gets, its
// deliveries (read, body frozen, sent, recorded) sharing the machine with its
// jobs. Not a SPEC §14 target; the report sets it beside the plain owner's run.
func (b *Bench) webhooks(ctx context.Context) error {
	m := b.h.Mock
	m.SetBehaviour(map[string]Behaviour{"primary": {Median: b.o.OverheadLatency}})
	spec := b.overheadSpec("webhooks")
	spec.Webhook = m.WebhookURL()
	p, err := b.h.Start(ctx, spec, false)
	if err != nil {
		return err
	}
	defer p.Stop()
	c := b.o.ProfileCallers
	warmBase := m.Webhooks()
	closedLoop(ctx, c, 4*c, b.o.MaxRun, func(ctx context.Context, i int) Sample {
		n := nonceFor("wh-warm-"+b.runID, i)
		return b.c.Job(ctx, p, n, n, 0)
	})
	// The warm-up's events are delivered before the measured load starts.
	warm := b.drain(ctx, p.Owner, warmBase, 0)
	if warm.Err != "" {
		return fmt.Errorf("warm-up deliveries: %s", warm.Err)
	}
	base := m.Webhooks()
	prefix := "wh-" + b.runID
	row := b.measure(ctx, p, "jobs", true, func() Run {
		return closedLoop(ctx, c, b.o.OverheadN, b.o.MaxRun, func(ctx context.Context, i int) Sample {
			nonce := nonceFor(prefix, i)
			return b.c.Job(ctx, p, nonce, nonce, 0)
		})
	})
	res := &WebhooksResult{Row: row, Drain: b.drain(ctx, p.Owner, base, warm.Events)}
	b.rep.Webhooks = res
	log.Printf("  webhooks: jobs c=%d n=%d %.0f/s added p50 %s p99 %s ms; %d events, %d delivered when the load ended, all %d in %s more %s",
		c, row.N, row.RPS, ms(row.Added.Q(.5)), ms(row.Added.Q(.99)), res.Events, res.AtEnd, res.Delivered, res.Took.Round(time.Millisecond), res.Err)
	in, err := b.db.integrity(ctx, p.Owner)
	if err != nil {
		return err
	}
	b.rep.checkIntegrity("webhooks", in)
	return nil
}

// drain waits (at most twice -max-run) until the mock has taken every
// completion event of owner but the first events (delivered before), counting
// the mock's deliveries from base.
func (b *Bench) drain(ctx context.Context, owner string, base, events int64) Drain {
	m := b.h.Mock
	var d Drain
	if err := b.db.pool.QueryRow(ctx, `SELECT count(*) FROM job_events WHERE owner = $1`, owner).Scan(&d.Events); err != nil {
		d.Err = "count events: " + err.Error()
		return d
	}
	d.Events -= events
	d.AtEnd = m.Webhooks() - base
	start := time.Now()
	for m.Webhooks()-base < d.Events && time.Since(start) < 2*b.o.MaxRun && ctx.Err() == nil {
		time.Sleep(50 * time.Millisecond)
	}
	d.Took, d.Delivered = time.Since(start), m.Webhooks()-base
	if d.Delivered < d.Events {
		d.Err = fmt.Sprintf("(gave up: %d of %d delivered)", d.Delivered, d.Events)
	}
	return d
}

func (b *Bench) writeWebhooks(m *md) {
	w := b.rep.Webhooks
	if w == nil {
		return
	}
	r := w.Row
	m.p("## 8. An owner with a webhook")
	m.p("")
	m.p("The overhead scenario's `/v1/jobs` load at %d callers (%d requests) for an owner with a webhook: every job also makes a completion event (SPEC §16) that River delivers to the mock while the load runs — read, body frozen, signed, sent, recorded. Not a SPEC §14 target; beside it, the plain owner's run of section 2.", r.Callers, r.N)
	m.p("")
	m.p("| owner | req/s | %% of direct | added p50 | added p99 | round trips | durable commits | router CPU ms | PostgreSQL CPU ms | busy |")
	m.p("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
	row := func(name string, x OverheadRow) {
		pct := "–"
		if d, ok := b.rep.row("direct", x.Callers); ok && d.RPS > 0 {
			pct = fmt.Sprintf("%.0f%%", 100*x.RPS/d.RPS)
		}
		m.p("| %s | %.0f | %s | %s | %s | %s | %s | %s | %s | %s |", name, x.RPS, pct, ms(x.Added.Q(.5)), ms(x.Added.Q(.99)),
			cell(x.PerJob.RoundTrips, x.HaveCounter), cell(x.PerJob.DurableCommits, x.HaveCounter), cell(routerPerJob(x)), cell(pgPerJob(x)), busyShare(x))
	}
	if plain, ok := b.rep.row("jobs", r.Callers); ok {
		row("without a webhook (section 2)", plain)
	}
	row("with a webhook", r)
	m.p("")
	gaveUp := ""
	if w.Err != "" {
		gaveUp = " " + w.Err
	}
	m.p("Deliveries: %d events; %d delivered by the time the load ended, %d in all %s after it%s.", w.Events, w.AtEnd, w.Delivered, w.Took.Round(time.Millisecond), gaveUp)
	m.p("")
}
