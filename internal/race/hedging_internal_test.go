package race

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/store"
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

// Attempts that end without a first byte count too, as waits: a target whose
// answers come quickly but which leaves more than 5% of its attempts hanging
// has a p95 beyond every answer seen, so its adaptive delay is hedge_max.
// (Found in review: only completed attempts were counted, so the hanging
// ones — exactly those hedging is for — never were, and the p95 drifted to
// hedge_min.)
func TestAdaptiveDelayCountsAttemptsThatHung(t *testing.T) {
	r := &Runner{}
	route := &Route{HedgeMin: 2 * time.Second, HedgeMax: 10 * time.Second}
	for range 90 {
		r.ttfb.add("flaky", 300*time.Millisecond)
	}
	for range 10 {
		r.ttfb.addWait("flaky", 30*time.Second) // cut by first_byte_timeout
	}
	if d := r.adaptiveDelay("flaky", route); d != 10*time.Second {
		t.Fatalf("10%% of attempts hung: %s, want hedge_max", d)
	}
	// Within 5% the answers decide.
	for range 5 {
		r.ttfb.addWait("mostly-fine", 30*time.Second)
	}
	for range 95 {
		r.ttfb.add("mostly-fine", 3*time.Second)
	}
	if d := r.adaptiveDelay("mostly-fine", route); d != 3*time.Second {
		t.Fatalf("5%% of attempts hung: %s, want the answers' p95 3s", d)
	}
}

// A wait cut short (a hedge that lost after 100 ms, a job cancelled at once)
// is not taken for an answer: it says only that the attempt was still
// waiting then. Counted as an answer, 180 such waits would halve this
// target's p95 (10 s instead of 19 s).
func TestAdaptiveDelayIsNotPulledDownByShortWaits(t *testing.T) {
	r := &Runner{}
	route := &Route{HedgeMin: 100 * time.Millisecond, HedgeMax: time.Minute}
	for range 180 {
		r.ttfb.addWait("t", 100*time.Millisecond)
	}
	for i := range 20 {
		r.ttfb.add("t", time.Duration(i+1)*time.Second) // 1 s … 20 s
	}
	if d := r.adaptiveDelay("t", route); d != 19*time.Second {
		t.Fatalf("p95 %s, want 19s (the answers' p95)", d)
	}
}

// The first byte is learnt when the adapter reports it, while the call is
// still running, and the call's end adds nothing more; a call that ends with
// no byte at all is learnt as a wait.
func TestTTFBLearntAtTheFirstByte(t *testing.T) {
	r := &Runner{}
	ctx, p := r.probeTTFB(context.Background(), "streaming")
	providers.NotifyFirstByte(ctx)
	if got := samplesOf(r, "streaming"); len(got) != 1 || got[0].censored {
		t.Fatalf("after the first byte: %+v, want one time to first byte", got)
	}
	providers.NotifyFirstByte(ctx) // a later call of the hook changes nothing
	p.ended(nil, providers.NewError("streaming", providers.KindStreamStalled, "stalled"))
	if got := samplesOf(r, "streaming"); len(got) != 1 {
		t.Fatalf("after the end: %+v, want the first byte alone", got)
	}

	_, p = r.probeTTFB(context.Background(), "silent")
	p.ended(nil, providers.NewError("silent", providers.KindTimeout, "no response byte"))
	if got := samplesOf(r, "silent"); len(got) != 1 || !got[0].censored || got[0].d <= 0 {
		t.Fatalf("a call that ended with no byte: %+v, want one wait", got)
	}

	// A stream that sent its headers (and perhaps comments) but no chunk
	// before it failed: the answer had not begun, a wait as long.
	_, p = r.probeTTFB(context.Background(), "headers")
	e := providers.NewError("headers", providers.KindStreamStalled, "no response byte after 0 chunks")
	e.Received = true
	p.ended(nil, e)
	if got := samplesOf(r, "headers"); len(got) != 1 || !got[0].censored || got[0].d <= 0 {
		t.Fatalf("a stream that ended with headers and no chunk: %+v, want one wait", got)
	}

	_, p = r.probeTTFB(context.Background(), "unsent")
	p.ended(nil, &providers.Error{Provider: "unsent", Kind: providers.KindConnRefused, NotSent: true})
	if got := samplesOf(r, "unsent"); len(got) != 0 {
		t.Fatalf("a call never sent: %+v, want nothing learnt", got)
	}
}

func samplesOf(r *Runner, target string) []ttfbSample {
	r.ttfb.mu.Lock()
	defer r.ttfb.mu.Unlock()
	if ring := r.ttfb.targets[target]; ring != nil {
		return slices.Clone(ring.samples)
	}
	return nil
}

// SPEC §6.4: each attempt in flight is hedged after its own target's delay,
// not the delay of whichever attempt started last. (Found in review: the
// last-started attempt's target decided the delay for all.)
func TestHedgeDueByTheSilentAttemptsOwnTarget(t *testing.T) {
	r := &Runner{}
	route := &Route{AdaptiveHedge: true, HedgeMin: time.Second, HedgeMax: 10 * time.Second, MaxInflight: 3}
	for range ttfbMinimum {
		r.ttfb.add("slow", 8*time.Second)
		r.ttfb.add("fast", 1500*time.Millisecond)
	}
	o := &orchestrator{r: r, route: route, inflight: map[string]context.CancelCauseFunc{}}
	start := time.Now()
	for _, a := range []*store.Attempt{{ID: "a1", Provider: "slow"}, {ID: "a2", Provider: "fast"}} {
		o.watchFirstByte(context.Background(), a)
		o.flights[a.ID].start = start
		o.inflight[a.ID] = func(error) {}
	}
	due := map[string]time.Duration{}
	for _, f := range o.waiting() {
		due[f.target] = f.due.Sub(start)
	}
	if due["slow"] != 8*time.Second || due["fast"] != 1500*time.Millisecond {
		t.Fatalf("hedges due after %v, want each target's own p95 (slow 8s, fast 1.5s)", due)
	}
	delete(o.inflight, "a2") // ended: forgotten
	if w := o.waiting(); len(w) != 1 || w[0].target != "slow" || len(o.flights) != 1 {
		t.Fatalf("after an attempt ended: %d waiting, %d on the clock", len(w), len(o.flights))
	}
}

// The adaptive delay never reaches the target's own first-byte deadline:
// a target that hangs on more than 5% of its calls has an unbounded p95
// (hedge_max), and with a deadline below hedge_max the attempt went unknown
// before any hedge could start — the job then waited for a resolution, in
// the one case hedging is for (found by make bench's degraded scenario:
// 6.6% of calls hanging, 48 of 66 hangs never hedged). Such a delay is three
// quarters of the deadline.
func TestAdaptiveDelayStartsBeforeTheFirstByteDeadline(t *testing.T) {
	r := &Runner{cfg: Config{Targets: map[string]*Target{
		"short":  {Timeout: 5 * time.Second},
		"fbt":    {Timeout: time.Minute, FirstByteTimeout: 4 * time.Second},
		"roomy":  {Timeout: time.Minute},
		"nohist": {Timeout: 8 * time.Second},
	}}}
	route := &Route{HedgeMin: 2 * time.Second, HedgeMax: 10 * time.Second}
	for _, target := range []string{"short", "fbt", "roomy"} {
		for range 90 {
			r.ttfb.add(target, 300*time.Millisecond)
		}
		for range 10 {
			r.ttfb.addWait(target, 5*time.Second) // hung until the deadline
		}
	}
	for target, want := range map[string]time.Duration{
		"short":  3750 * time.Millisecond, // ¾ of timeout 5 s
		"fbt":    3 * time.Second,         // ¾ of first_byte_timeout 4 s
		"roomy":  10 * time.Second,        // hedge_max fits before the deadline
		"nohist": 6 * time.Second,         // no history: hedge_max 10 s, past the 8 s deadline
	} {
		if d := r.adaptiveDelay(target, route); d != want {
			t.Errorf("%s: delay %s, want %s", target, d, want)
		}
	}
}
