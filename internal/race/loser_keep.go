package race

import (
	"context"
	"errors"
	"math"
	"time"
)

// A loser a hedge was started for because it had no response byte, and that
// still has none when another attempt wins, tells its target's breaker
// nothing by itself: a target that accepts and never answers (a black hole)
// and a healthy one that is only slower than the hedge delay look the same
// at the cut. SPEC §10 excludes the cancellation of a hedge loser from the
// counts; a black hole must still open its breaker. The rule that tells them
// apart (lossBar, keepLoser):
//
//   - A target that has answered recently (a first byte among its recent
//     times to first byte, ttfbStats.answered) is expected to answer within
//     twice its recent p95 time to first byte (at most its first-byte
//     budget). Its silent loser is not cut at the win: it is kept until that
//     bar (or its hedge delay, if longer) has passed, or until its first
//     byte comes, whichever is first. Its first byte ends it as any loser
//     (excluded from the counts) and teaches the p95 the target's real time
//     to first byte; silence past the bar is its target's failure.
//   - A target that has not answered recently (no first byte, or more than
//     5% of its recent attempts still silent past its longest answer: the
//     p95 is unbounded) keeps the bar it had: its hedge delay, already past
//     at the cut. So a black hole opens its breaker after as many jobs as a
//     failing target does, and costs no call kept open.
//   - Either way, a loser hedged early (the job's deadline near) and cut
//     before its target's own hedge delay is excused and cut at once, as
//     before (silentBar).
//   - A half-open breaker's probe (an attempt admitted as one: flight.probe)
//     measures its target's health: the job's answer comes from the hedge
//     anyway. Its bar is its first-byte budget whatever was learned (a
//     target that recovered slower than it was is not failed at its hedge
//     delay), and once it has begun answering it is never cut as a loser:
//     it runs to its end (bounded by its own timeouts) and its breaker
//     counts that end. A slow but healthy target whose breaker the rule
//     above opened (before anything was learned) closes again at its probe,
//     and its answer teaches the p95.
//   - An error status (a 5xx, a 429, an error object in a 200 stream) is
//     reported as a first byte, but it is no time to answer: it is not among
//     the times answered reads (ttfbSample.refusal). A target whose breaker
//     fast errors opened has not answered, whatever its p95 says.
//   - The router's drain ends the keeping (keep returns on Runner.drained):
//     the job has its answer, and a kept loser must not hold the process's
//     shutdown. It is cut then, silent under its bar: an uncounted loser.
//     A probe too: the breaker is this process's, about to go.

// lossKeepFactor is how many times its recent p95 time to first byte a
// target that answers may stay silent before its hedged loser counts.
const lossKeepFactor = 2

// lossBar is, for a silent attempt on target that a hedge is started for
// now, how long it may stay silent before its target is counted as failed
// when it loses (flight.lossBar; never less than its hedge delay,
// flight.silentBar). probe says the attempt was admitted as its breaker's
// half-open probe (flight.probe). See the rule above.
func (o *orchestrator) lossBar(target string, probe bool) time.Duration {
	bar := o.targetHedgeDelay(target)
	budget := o.r.cfg.Targets[target].firstByteBudget()
	if probe && budget > 0 {
		bar = max(bar, budget)
	}
	if p95, ok := o.r.ttfb.answered(o.r.ttfbKey(target, o.sentModel(target))); ok { // per target and model sent (SPEC §15)
		expect := p95 * lossKeepFactor
		if p95 > math.MaxInt64/lossKeepFactor {
			expect = math.MaxInt64
		}
		if budget > 0 {
			expect = min(expect, budget)
		}
		bar = max(bar, expect)
	}
	return bar
}

// admittedProbe says whether an attempt on target, admitted by its breaker
// just now (it is about to be sent), was admitted as the breaker's half-open
// probe: its breaker is half-open. Asked as the attempt is launched, not when
// it is hedged: an attempt admitted while its breaker was closed, the breaker
// opening and turning half-open while it ran, is no probe (the breaker will
// not count its outcome, another generation's). Between the admission and
// this, only the attempt's creation runs: a breaker admitted closed cannot
// have opened and waited its open_for meanwhile but in a stall; one admitted
// half-open stays so while its probe is out, unless another probe ended it,
// and its outcome no longer counts then either.
func (o *orchestrator) admittedProbe(target string) bool {
	v, ok := o.r.cfg.Admission.(HalfOpenView)
	return ok && v.HalfOpen(o.r.breakerOf(target, o.spec))
}

// answered is target's recent p95 time to first byte (p95Of, however few the
// samples) and true when it has answered recently: at least one first byte
// is among its samples and the p95 is bounded. An error status's "first
// byte" (ttfbSample.refusal) is none: it is left out of both.
func (s *ttfbStats) answered(target string) (time.Duration, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.targets[target]
	if r == nil {
		return 0, false
	}
	seen := false
	samples := make([]ttfbSample, 0, len(r.samples))
	for _, sample := range r.samples {
		if sample.refusal {
			continue
		}
		seen = seen || !sample.censored
		samples = append(samples, sample)
	}
	if !seen {
		return 0, false
	}
	p := p95Of(samples)
	return p, p != math.MaxInt64
}

// keepLoser is the context of the call of an attempt on the hedge clock (f):
// ctx's, except that a cut as a loser (errLoser) of a silent attempt that a
// hedge was started for is held back while the rule above keeps it (keep).
// end must be called once the call has returned. An attempt of a route that
// never hedges is never kept (no hedge is started for it): its call takes ctx
// as it is.
func (r *Runner) keepLoser(ctx context.Context, f *flight) (kept context.Context, end func()) {
	if f == nil || !f.mayHedge {
		return ctx, func() {}
	}
	c := context.WithoutCancel(ctx)
	var cancelDeadline context.CancelFunc = func() {}
	if dl, ok := ctx.Deadline(); ok {
		c, cancelDeadline = context.WithDeadline(c, dl)
	}
	c, cut := context.WithCancelCause(c)
	done := make(chan struct{})
	base := r.base
	if base == nil {
		base = context.Background()
	}
	stop := context.AfterFunc(ctx, func() {
		cause := context.Cause(ctx)
		if errors.Is(cause, errLoser) {
			f.keep(base, r.drained, done)
		}
		cut(cause)
	})
	return c, func() {
		stop()
		close(done)
		cut(context.Canceled)
		cancelDeadline()
	}
}

// keep waits, for an attempt cut as a loser, while the rule above keeps it
// running: until its loss bar has passed since it started, or its first byte
// comes (a probe: until its call ends), or the router drains (drained: its
// job has its answer, and a kept loser must not hold the shutdown; it is cut
// silent under its bar, not counted) or shuts down (base), or its call has
// ended (done). It returns at once for an attempt no hedge was
// started for, one that had begun answering (not a probe), and one cut
// before its target's own hedge delay (silentBar: hedged early because the
// job's deadline was near), which is excused as before.
func (f *flight) keep(base context.Context, drained, done <-chan struct{}) {
	after := time.Duration(f.hedgedAfter.Load())
	if after <= 0 {
		return
	}
	probe := f.probe.Load()
	answered := f.answered
	var until <-chan time.Time
	switch {
	case f.answering.Load() && !probe:
		return
	case f.answering.Load():
		answered = nil // a probe that has begun answering runs on
	case time.Since(f.start) < max(after, time.Duration(f.silentBar.Load())):
		return // hedged early, and cut before its target's own hedge delay: excused
	default:
		bar := max(after, time.Duration(f.lossBar.Load()))
		t := time.NewTimer(time.Until(f.start.Add(bar)))
		defer t.Stop()
		until = t.C
	}
	for {
		select {
		case <-until:
			return
		case <-answered:
			if !probe {
				return
			}
			answered, until = nil, nil
		case <-drained:
			return
		case <-base.Done():
			return
		case <-done:
			return
		}
	}
}
