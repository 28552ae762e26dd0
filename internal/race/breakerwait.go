package race

import (
	"time"

	"go.opentelemetry.io/otel/trace"
)

// AdmitDelay is an optional part of an Admission (a circuit breaker set): how
// long until provider's breaker may admit an attempt again. A half-open
// breaker with a probe free admits now (0, known). known is false when
// nothing says when: a half-open breaker whose probes are all in flight
// admits again as soon as one ends well (or opens again if it fails).
type AdmitDelay interface {
	AdmitsIn(provider string) (d time.Duration, known bool)
}

// breakerWaitHalfOpen is how long a job that breakers refuse, none saying
// when it may pass (half-open ones with their probes in flight), waits before
// it is tried again: a probe ends within moments, or its breaker opens and
// says then when it probes again.
const breakerWaitHalfOpen = time.Second

// breakerWaitMin is the shortest wait for a breaker (one whose open_for is
// just running out), so that a job is not tried again in a tight loop.
const breakerWaitMin = 10 * time.Millisecond

// breakerWait says, for a job no target of whose route is eligible now, when
// it may be tried again: ok when every target not yet used in the job's round
// (used) is ineligible only because a circuit breaker (byBreaker: its own, or
// the one of the model the job sends) refuses it — which
// clears by itself — and wait is then the time until the first of those
// breakers may admit an attempt (AdmitDelay; breakerWaitHalfOpen when it does
// not say). known says that every one of them said when (AdmitDelay), so that
// none admits sooner than wait. A target already tried in the round is not
// waited for: it would not be tried again anyway, and its breaker is open
// most likely because of that very attempt's failure. Any other reason (a
// context window too small, a conformance gate) does not clear by itself: ok
// is false.
func (r *Runner) breakerWait(decisions []Decision, byBreaker map[string]string, used map[string]bool) (wait time.Duration, known, ok bool) {
	known = true
	for _, d := range decisions {
		if d.Eligible || d.Event != "" || used[d.Provider] {
			continue
		}
		key, refused := byBreaker[d.Provider] // the breaker that refused it
		if !refused {
			return 0, false, false
		}
		w, said := breakerWaitHalfOpen, false
		if ad, found := r.cfg.Admission.(AdmitDelay); found {
			if in, k := ad.AdmitsIn(key); k {
				w, said = in, true
			}
		}
		known = known && said
		w = max(w, breakerWaitMin)
		if !ok || w < wait {
			wait, ok = w, true
		}
	}
	return wait, known && ok, ok
}

// runLater runs the job again (Submit) after d, once: a job run that found
// every target's breaker refusing it, released so that any replica may take
// it meanwhile. A later call for the same job replaces the earlier one.
// Nothing is scheduled while the runner stops; the job, pending or running
// with no lease, is then an orphan for another replica's recovery. parent,
// when valid, is the span context the run's span continues, as the first
// run's did (the request's that created the job): the job stays in its trace.
func (r *Runner) runLater(jobID string, d time.Duration, parent trace.SpanContext) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.stopping {
		return
	}
	if t := r.later[jobID]; t != nil {
		t.Stop()
	}
	var t *time.Timer
	t = time.AfterFunc(d, func() {
		r.mu.Lock()
		mine := r.later[jobID] == t // set before r.mu was released
		if mine {
			delete(r.later, jobID)
		}
		r.mu.Unlock()
		if mine {
			r.submit(jobID, nil, nil, parent)
		}
	})
	r.later[jobID] = t
}

// stopLater cancels every run scheduled by runLater. r.mu is held.
func (r *Runner) stopLater() {
	for id, t := range r.later {
		t.Stop()
		delete(r.later, id)
	}
}
