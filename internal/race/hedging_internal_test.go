package race

import (
	"testing"
	"time"
)

// The adaptive delay is the target's p95 time to first byte, clamped to
// [hedge_min, hedge_max]; hedge_max without enough history.
func TestAdaptiveDelayFromTimeToFirstByte(t *testing.T) {
	r := &Runner{}
	route := &Route{HedgeMin: 2 * time.Second, HedgeMax: 10 * time.Second}
	if d := r.adaptiveDelay("a", route); d != 10*time.Second {
		t.Fatalf("no history: %s, want hedge_max", d)
	}
	for i := range ttfbMinimum {
		r.ttfb.add("fast", 100*time.Millisecond+time.Duration(i)*time.Millisecond)
		r.ttfb.add("mid", time.Duration(i+1)*time.Second/2) // 0.5s … 5s
		r.ttfb.add("slow", time.Minute)
	}
	if d := r.adaptiveDelay("fast", route); d != 2*time.Second {
		t.Fatalf("fast target: %s, want hedge_min", d)
	}
	if d := r.adaptiveDelay("mid", route); d != 5*time.Second {
		t.Fatalf("mid target: %s, want its p95 5s", d)
	}
	if d := r.adaptiveDelay("slow", route); d != 10*time.Second {
		t.Fatalf("slow target: %s, want hedge_max", d)
	}
}

// The hedge budget allows max(min_concurrent, percent of jobs in flight).
func TestHedgeBudget(t *testing.T) {
	var b hedgeBudgets
	route := &Route{HedgeBudgetPercent: 10, HedgeBudgetMin: 1}
	var done []func()
	for range 20 {
		done = append(done, b.jobStarted("r"))
	}
	rel1, ok1, _ := b.acquire("r", route)
	rel2, ok2, _ := b.acquire("r", route)
	_, ok3, why := b.acquire("r", route)
	if !ok1 || !ok2 || ok3 || why == "" {
		t.Fatalf("20 jobs at 10%%: %v %v %v (%s), want two hedges then a denial", ok1, ok2, ok3, why)
	}
	rel1()
	rel1() // idempotent
	if _, ok, _ := b.acquire("r", route); !ok {
		t.Fatal("a released hedge was not given back")
	}
	rel2()
	for _, d := range done {
		d()
	}
}
