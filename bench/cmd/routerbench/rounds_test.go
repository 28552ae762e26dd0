package main

import (
	"slices"
	"testing"
	"time"
)

func TestRoundOrderAlternates(t *testing.T) {
	if got := roundOrder(0); !slices.Equal(got, []string{"direct", "jobs", "chat"}) {
		t.Fatalf("round 1: %v", got)
	}
	if got := roundOrder(1); !slices.Equal(got, []string{"chat", "jobs", "direct"}) {
		t.Fatalf("round 2: %v", got)
	}
	if got := roundOrder(2); !slices.Equal(got, roundOrder(0)) {
		t.Fatalf("round 3: %v", got)
	}
}

// Three rounds whose machine ran at different speeds: each round's ratio is
// against its own direct run, and the verdicts take the medians.
func TestTargetsTakeTheMedianOverRounds(t *testing.T) {
	row := func(ep string, rps float64, p99 time.Duration) OverheadRow {
		return OverheadRow{Endpoint: ep, Callers: spec14Callers, N: 1000, RPS: rps, Added: newDist([]time.Duration{p99})}
	}
	round := func(i int, direct, jobs, chat float64, p99 time.Duration) OverheadRound {
		r := OverheadRound{Order: roundOrder(i)}
		for _, ep := range r.Order {
			switch ep {
			case "direct":
				r.Rows = append(r.Rows, row(ep, direct, time.Millisecond))
			case "jobs":
				r.Rows = append(r.Rows, row(ep, jobs, p99))
			default:
				r.Rows = append(r.Rows, row(ep, chat, p99))
			}
		}
		return r
	}
	b := &Bench{}
	b.rep.Rounds = []OverheadRound{
		round(0, 3000, 1200, 1350, 60*time.Millisecond), // 40%, 45%
		round(1, 2000, 1100, 1040, 40*time.Millisecond), // 55%, 52%
		round(2, 2800, 1456, 1400, 50*time.Millisecond), // 52%, 50%
	}
	b.rep.Overhead = b.rep.Rounds[0].Rows
	if got := b.rep.throughputRatios("jobs"); len(got) != 3 || pct(got[0]) != "40%" || pct(got[1]) != "55%" || pct(got[2]) != "52%" {
		t.Fatalf("jobs ratios %v", got)
	}
	var m md
	b.writeTargets(&m)
	b.writeRounds(&m)
	out := m.String()
	reportHas(t, out,
		"| throughput: `jobs` ≥ 50% of direct at 64 callers | 52%, the median of 3 alternating rounds (40%, 55%, 52%; the first: 1200 vs 3000 req/s) | **met** |",
		"| throughput: `chat` ≥ 50% of direct at 64 callers | 50%, the median of 3 alternating rounds (45%, 52%, 50%; the first: 1350 vs 3000 req/s) | **met** |",
		"| router-added p99 ≤ 20 ms at 64 callers (`jobs`) | 50.0 ms, the median of 3 alternating rounds (60.0, 40.0, 50.0) | **missed: 2.5× the target** |",
		"| 2 | chat, jobs, direct | 2000 | 1100 | 55% | 1040 | 52% | 40.0 | 40.0 |",
	)
}
