package main

import (
	"fmt"
	"math"
	"sort"
	"time"
)

// Dist is a sorted set of latencies in milliseconds; +Inf marks a request that
// never reached a usable answer within its bound.
type Dist []float64

func newDist(ds []time.Duration) Dist {
	d := make(Dist, len(ds))
	for i, v := range ds {
		d[i] = float64(v) / float64(time.Millisecond)
	}
	sort.Float64s(d)
	return d
}

// latencies of a run; failed requests count as +Inf when failInf.
func latencies(r Run, failInf bool) Dist {
	d := make(Dist, 0, len(r.Samples))
	for _, s := range r.Samples {
		if failInf && !s.OK() {
			d = append(d, math.Inf(1))
			continue
		}
		d = append(d, float64(s.Latency)/float64(time.Millisecond))
	}
	sort.Float64s(d)
	return d
}

// Q is the q-quantile (nearest rank).
func (d Dist) Q(q float64) float64 {
	if len(d) == 0 {
		return math.NaN()
	}
	i := int(math.Ceil(q*float64(len(d)))) - 1
	i = max(0, min(i, len(d)-1))
	return d[i]
}

// ms formats milliseconds for tables.
func ms(v float64) string {
	switch {
	case math.IsNaN(v):
		return "–"
	case math.IsInf(v, 1):
		return "∞ (unresolved)"
	case v < 10:
		return fmt.Sprintf("%.2f", v)
	case v < 100:
		return fmt.Sprintf("%.1f", v)
	}
	return fmt.Sprintf("%.0f", v)
}
