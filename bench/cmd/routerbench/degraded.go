package main

import (
	"context"
	"fmt"
	"log"
	"math"
	"time"
)

// DegradedResult is the degraded-primary scenario: a share of the primary's
// calls hang, the route [primary, fallback] keeps its default hedging (or
// -degraded-hedge-after when set).
type DegradedResult struct {
	Policy         string
	ProviderFaults string
	N, OK          int
	E2E            Dist // until the answer; a job that did not succeed counts as +Inf
	CallsPerJob    float64
	PrimaryCalls   int64
	FallbackCalls  int64
	Hangs          int64
	Hedges         int64
	HedgeDelay     Dist // observed: hedge attempt created minus primary attempt created, ms
	FallbackDirect Dist // the fallback's latency measured directly
	Bound          float64
	In             Integrity
}

func (b *Bench) degraded(ctx context.Context) error {
	healthy := Behaviour{Median: b.o.Median, Sigma: b.o.Sigma}
	primary := healthy
	primary.Hang = b.o.Hang
	res := &DegradedResult{ProviderFaults: fmt.Sprintf("%.0f%% of primary calls hang", 100*b.o.Hang)}
	// The fallback's own latency, measured directly, for the SPEC bound.
	b.h.Mock.SetBehaviour(map[string]Behaviour{"fallback": healthy})
	fb := closedLoop(ctx, b.o.DegradedCallers, b.o.DegradedN, b.o.MaxRun, func(ctx context.Context, i int) Sample {
		return b.c.Direct(ctx, b.h.Mock.URL(), "fallback", "")
	})
	res.FallbackDirect = latencies(fb, true)
	spec := RouterSpec{
		Name: b.owner("degraded"),
		Providers: []ProviderSpec{
			{Name: "primary", Model: "primary", Timeout: b.o.PrimaryTimeout},
			{Name: "fallback", Model: "fallback", Timeout: 30 * time.Second},
		},
		Route: RouteSpec{Providers: []string{"primary", "fallback"}, HedgeAfter: b.o.DegradedHedgeAfter},
	}
	res.Policy = "route [primary, fallback] with its default hedging (no hedge settings in the configuration)"
	if b.o.DegradedHedgeAfter != "" {
		res.Policy = "route [primary, fallback], hedge_after: " + b.o.DegradedHedgeAfter
	}
	res.Policy += fmt.Sprintf("; primary timeout %s, no retries of a hang", b.o.PrimaryTimeout)
	b.h.Mock.SetBehaviour(map[string]Behaviour{"primary": healthy, "fallback": healthy})
	p, err := b.h.Start(ctx, spec, false)
	if err != nil {
		return err
	}
	defer p.Stop()
	// Warm-up on a healthy primary: connections, and an adaptive delay's samples.
	closedLoop(ctx, b.o.DegradedCallers, 120, b.o.MaxRun, func(ctx context.Context, i int) Sample {
		n := nonceFor("dwarm-"+spec.Name, i)
		return b.c.Job(ctx, p, n, n, 0)
	})
	b.h.Mock.SetBehaviour(map[string]Behaviour{"primary": primary, "fallback": healthy})
	b.h.Mock.Reset()
	prefix := "deg-" + spec.Name
	r := closedLoop(ctx, b.o.DegradedCallers, b.o.DegradedN, b.o.MaxRun, func(ctx context.Context, i int) Sample {
		n := nonceFor(prefix, i)
		return b.c.Job(ctx, p, n, n, 0)
	})
	calls := b.h.Mock.Calls()
	res.N = len(r.Samples)
	res.OK = res.N - r.Errors()
	res.E2E = latencies(r, true)
	res.PrimaryCalls, res.FallbackCalls, res.Hangs = calls["primary"], calls["fallback"], b.h.Mock.hangs.Load()
	res.CallsPerJob = float64(res.PrimaryCalls+res.FallbackCalls) / float64(max(1, res.N))
	in, err := b.db.integrity(ctx, p.Owner)
	if err != nil {
		return err
	}
	res.In, res.Hedges = in, in.Hedges
	b.rep.checkIntegrity("degraded", in)
	if res.HedgeDelay, err = b.db.hedgeDelays(ctx, p.Owner, prefix); err != nil {
		return err
	}
	res.Bound = math.NaN()
	if len(res.HedgeDelay) > 0 {
		res.Bound = 1.1 * (res.HedgeDelay.Q(.5) + res.FallbackDirect.Q(.99))
	}
	b.rep.Degraded = res
	log.Printf("  degraded: ok %d/%d p50 %s p99 %s ms, %.3f calls/job, %d hedges (delay p50 %s ms), bound %s ms",
		res.OK, res.N, ms(res.E2E.Q(.5)), ms(res.E2E.Q(.99)), res.CallsPerJob, res.Hedges, ms(res.HedgeDelay.Q(.5)), ms(res.Bound))
	return nil
}
