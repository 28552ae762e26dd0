package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"net/http"
	"sync/atomic"
	"time"
)

// DegradedRow is one failover policy under one fault mix.
type DegradedRow struct {
	Mix, Variant   string
	Policy         string // how the route is configured
	N, OK          int
	Unresolved     int // jobs left unknown or failed
	E2E            Dist
	CallsPerJob    float64
	PrimaryCalls   int64
	FallbackCalls  int64
	Hedges, Lost   int64
	Resolved       int // unknown attempts the harness resolved (sequential)
	Bound          float64
	BoundNote      string
	ProviderFaults string
}

type faultMix struct {
	name         string
	hang, status float64
}

func (b *Bench) degraded(ctx context.Context) error {
	mixes := []faultMix{{"issue", b.o.Hang, b.o.Status}}
	if b.o.Status > 0 {
		mixes = append(mixes, faultMix{"spec", b.o.Hang, 0})
	}
	healthy := Behaviour{Median: b.o.Median, Sigma: b.o.Sigma}
	// The fallback's own p99, measured directly, for the SPEC bound.
	b.h.Mock.SetBehaviour(map[string]Behaviour{"fallback": healthy})
	fb := closedLoop(ctx, b.o.DegradedCallers, 1000, b.o.MaxRun, func(ctx context.Context, i int) Sample {
		return b.c.Direct(ctx, b.h.Mock.URL(), "fallback", "")
	})
	b.rep.FallbackDirect = latencies(fb, true)
	for _, mix := range mixes {
		primary := healthy
		primary.Hang, primary.Status = mix.hang, mix.status
		for _, v := range []string{"single", "sequential", "fixed", "adaptive"} {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			row, err := b.degradedVariant(ctx, mix, v, primary, healthy)
			if err != nil {
				return fmt.Errorf("%s/%s: %w", mix.name, v, err)
			}
			b.rep.Degraded = append(b.rep.Degraded, row)
			log.Printf("  %-5s %-10s ok %d/%d p50 %s p99 %s p99.9 %s ms, %.3f calls/job, hedges %d",
				mix.name, v, row.OK, row.N, ms(row.E2E.Q(.5)), ms(row.E2E.Q(.99)), ms(row.E2E.Q(.999)), row.CallsPerJob, row.Hedges)
		}
	}
	return nil
}

func (b *Bench) degradedVariant(ctx context.Context, mix faultMix, variant string, primary, healthy Behaviour) (DegradedRow, error) {
	row := DegradedRow{Mix: mix.name, Variant: variant,
		ProviderFaults: fmt.Sprintf("%.0f%% hang, %.0f%% 503", 100*mix.hang, 100*mix.status)}
	spec := RouterSpec{
		Name: b.owner("deg-" + mix.name + "-" + variant),
		Providers: []ProviderSpec{
			{Name: "primary", Model: "primary", Timeout: b.o.PrimaryTimeout},
			{Name: "fallback", Model: "fallback", Timeout: 30 * time.Second},
		},
		Route: RouteSpec{Providers: []string{"primary", "fallback"}},
		Lease: 30 * time.Second,
	}
	switch variant {
	case "single":
		spec.Route.Providers = []string{"primary"}
		row.Policy = "route [primary]; a hang is unknown after the timeout, a 503 fails the job"
	case "sequential":
		row.Policy = fmt.Sprintf("route [primary, fallback], no hedging; a hang is unknown after %s and the harness resolves it `failed` at once, then the router fails over", b.o.PrimaryTimeout)
	case "fixed":
		spec.Route.HedgeAfter = b.o.HedgeAfter.String()
		row.Policy = "hedge_after: " + b.o.HedgeAfter.String()
		row.Bound = float64(b.o.HedgeAfter)/float64(time.Millisecond) + b.rep.FallbackDirect.Q(.99)
	case "adaptive":
		spec.Route.HedgeAfter = "adaptive"
		spec.Route.HedgeMin = b.o.HedgeMin
		spec.Route.Extra = "    hedge_max: " + b.o.PrimaryTimeout.String() + "\n"
		row.Policy = fmt.Sprintf("hedge_after: adaptive (primary p95, hedge_min %s, hedge_max %s)", b.o.HedgeMin, b.o.PrimaryTimeout)
		// The adaptive delay is the healthy primary's p95 (the same distribution
		// as the fallback's, measured directly), clamped to [hedge_min, hedge_max].
		delay := min(max(b.rep.FallbackDirect.Q(.95), float64(b.o.HedgeMin)/1e6), float64(b.o.PrimaryTimeout)/1e6)
		row.Bound = delay + b.rep.FallbackDirect.Q(.99)
	}
	if row.Bound > 0 {
		row.Bound *= 1.1
		row.BoundNote = "hedge delay + fallback p99 (direct) + 10%"
	}
	b.h.Mock.SetBehaviour(map[string]Behaviour{"primary": healthy, "fallback": healthy})
	p, err := b.h.Start(ctx, spec, false)
	if err != nil {
		return row, err
	}
	defer p.Stop()
	// Warm-up on a healthy primary: connections, and the adaptive delay's samples.
	closedLoop(ctx, 8, 120, b.o.MaxRun, func(ctx context.Context, i int) Sample {
		n := nonceFor("dwarm-"+spec.Name, i)
		return b.c.Job(ctx, p, n, n, 0)
	})
	b.h.Mock.SetBehaviour(map[string]Behaviour{"primary": primary, "fallback": healthy})
	b.h.Mock.Reset()
	prefix := "deg-" + spec.Name
	var resolved atomic.Int64
	r := closedLoop(ctx, b.o.DegradedCallers, b.o.DegradedN, b.o.MaxRun, func(ctx context.Context, i int) Sample {
		n := nonceFor(prefix, i)
		start := time.Now()
		s := b.c.Job(ctx, p, n, n, 0)
		if variant == "sequential" && s.State == "unknown" {
			if b.resolveUnknown(ctx, p, s.JobID) {
				resolved.Add(1)
			}
			s.State = b.c.follow(ctx, p, s.JobID, start.Add(2*time.Minute))
			s.Latency = time.Since(start)
		}
		return s
	})
	calls := b.h.Mock.Calls()
	row.N, row.Resolved = len(r.Samples), int(resolved.Load())
	row.OK = row.N - r.Errors()
	row.Unresolved = r.Errors()
	row.E2E = latencies(r, true)
	row.PrimaryCalls, row.FallbackCalls = calls["primary"], calls["fallback"]
	row.CallsPerJob = float64(row.PrimaryCalls+row.FallbackCalls) / float64(max(1, row.N))
	in, err := b.db.integrity(ctx, p.Owner)
	if err != nil {
		return row, err
	}
	b.rep.checkIntegrity("degraded "+mix.name+"/"+variant, in)
	row.Hedges, row.Lost = in.Hedges, in.Lost
	return row, nil
}

// resolveUnknown resolves the job's unknown attempts as failed (what
// reconciliation would conclude for a provider with no record of them), which
// lets the race continue on the next provider.
func (b *Bench) resolveUnknown(ctx context.Context, p *RouterProc, id string) bool {
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, p.Base+"/v1/jobs/"+id, nil)
	req.Header.Set("Authorization", "Bearer "+p.Key)
	resp, err := b.c.http.Do(req)
	if err != nil {
		return false
	}
	raw, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	var j struct {
		Attempts []struct {
			Seq   int    `json:"seq"`
			State string `json:"state"`
		} `json:"attempts"`
	}
	if json.Unmarshal(raw, &j) != nil {
		return false
	}
	done := false
	for _, a := range j.Attempts {
		if a.State != "unknown" {
			continue
		}
		url := fmt.Sprintf("%s/v1/jobs/%s/attempts/%d/resolve", p.Base, id, a.Seq)
		r, _, err := b.c.post(ctx, url, p.Key, map[string]string{"Prefer": "wait=60"},
			[]byte(`{"outcome":"failed","note":"bench: the provider has no record of this call"}`))
		if err == nil && r.StatusCode == http.StatusOK {
			done = true
		}
	}
	return done
}
