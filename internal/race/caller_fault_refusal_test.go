package race_test

import (
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/race"
	"github.com/routerhq/router/internal/store"
)

// A caller-fault refusal (context length with no larger target left, a plain
// bad request, content policy) from one target does not stop a race another
// target is still working on — in flight, or waiting out its retry's
// backoff: that target accepted the request and may still answer.
//
// The steps are ordered by channels: each refusal is sent only once the
// other target is working on the request, and that target's transient error
// comes once the refusal has ended (refusalEnded). The Retry-After of that
// error is the scenario — the refusal lands while the retry waits — not a
// synchronisation: with the fix the job succeeds in whatever order the two
// results reach the race.

// refusalEnded closes a channel per provider when its first attempt ends
// (the Observer hears of it just before the race does).
type refusalEnded struct {
	race.Observer
	mu    sync.Mutex
	ended map[string]chan struct{}
}

func newRefusalEnded(providers ...string) *refusalEnded {
	r := &refusalEnded{Observer: nopRefusalObserver{}, ended: map[string]chan struct{}{}}
	for _, p := range providers {
		r.ended[p] = make(chan struct{})
	}
	return r
}

func (r *refusalEnded) AttemptFinished(provider, _, _ string, _ providers.Kind, _ time.Duration, _ providers.Usage) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if ch, ok := r.ended[provider]; ok {
		close(ch)
		delete(r.ended, provider)
	}
}

// of is provider's channel; call before the race starts.
func (r *refusalEnded) of(provider string) <-chan struct{} {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.ended[provider]
}

type nopRefusalObserver struct{}

func (nopRefusalObserver) AttemptStarted(string, string) {}
func (nopRefusalObserver) AttemptFinished(string, string, string, providers.Kind, time.Duration, providers.Usage) {
}
func (nopRefusalObserver) RaceLost(string)     {}
func (nopRefusalObserver) HedgeStarted(string) {}
func (nopRefusalObserver) JobSettled(string)   {}

// refusalRetryAfter is how long the working target asks to wait before its
// retry: the refusal comes meanwhile.
const refusalRetryAfter = 500 * time.Millisecond

// refusalJobError is the job's error, for a failure message.
func refusalJobError(j *store.Job) string {
	if j.Error == nil {
		return "none"
	}
	return *j.Error
}

func refusalStep(kind providers.Kind, msg string) providers.Step {
	return providers.Step{Error: &providers.Error{Kind: kind, StatusCode: 400, Message: msg}}
}

// A hedge refuses the request (context too long for it, content policy)
// while the primary, which took it, is in flight; the primary then fails
// transiently and its retry answers.
func TestCallerFaultRefusalByAHedgeKeepsThePrimarysRetry(t *testing.T) {
	for _, c := range []struct {
		name string
		step providers.Step
	}{
		{"context_length", refusalStep(providers.KindContextLength, "maximum context length exceeded")},
		{"content_policy", refusalStep(providers.KindContentPolicy, "flagged by the safety system")},
	} {
		t.Run(c.name, func(t *testing.T) {
			obs := newRefusalEnded("fallback")
			refused := obs.of("fallback")
			b := setupObserved(t, race.Route{HedgeAfter: 10 * time.Millisecond}, nil, obs,
				provSpec{name: "primary", maxRetries: 1, window: 200000, respond: func(call int, _ *providers.Request) providers.Step {
					if call == 1 {
						<-refused // silent until the hedge has refused
						return providers.Step{Status: 503, RetryAfter: refusalRetryAfter}
					}
					return providers.Step{Output: validTriage}
				}},
				provSpec{name: "fallback", respond: func(int, *providers.Request) providers.Step { return c.step }},
			)
			j := b.waitSettled(t, b.submit(t).ID)
			if j.State != store.JobSucceeded || b.prov["primary"].Calls() != 2 || b.prov["fallback"].Calls() != 1 {
				t.Fatalf("job %s (error %s), primary calls %d, fallback calls %d; want succeeded by the primary's retry, 2, 1",
					j.State, refusalJobError(j), b.prov["primary"].Calls(), b.prov["fallback"].Calls())
			}
			if a := j.Attempts[len(j.Attempts)-1]; a.Provider != "primary" || a.Role != store.RoleRetry || a.State != store.AttemptWon {
				t.Fatalf("last attempt %s/%s/%s, want the primary's retry, won", a.Provider, a.Role, a.State)
			}
		})
	}
}

// The roles swapped: a small-window primary refuses the request as too long
// while a hedge on a larger-window target is in flight; that target's 503 is
// retried and answers.
func TestContextLengthRefusalByThePrimaryKeepsTheHedgesRetry(t *testing.T) {
	obs := newRefusalEnded("small")
	refused := obs.of("small")
	hedged := make(chan struct{})
	b := setupObserved(t, race.Route{HedgeAfter: 10 * time.Millisecond}, nil, obs,
		provSpec{name: "small", respond: func(int, *providers.Request) providers.Step {
			<-hedged // the hedge is in flight when the refusal comes
			return refusalStep(providers.KindContextLength, "maximum context length exceeded")
		}},
		provSpec{name: "big", maxRetries: 1, window: 200000, respond: func(call int, _ *providers.Request) providers.Step {
			if call == 1 {
				close(hedged)
				<-refused
				return providers.Step{Status: 503, RetryAfter: refusalRetryAfter}
			}
			return providers.Step{Output: validTriage}
		}},
	)
	j := b.waitSettled(t, b.submit(t).ID)
	if j.State != store.JobSucceeded || b.prov["big"].Calls() != 2 {
		t.Fatalf("job %s (error %s), big calls %d; want succeeded by big's retry", j.State, refusalJobError(j), b.prov["big"].Calls())
	}
}

// A plain bad request from the primary while the hedge's retry waits out its
// Retry-After: the retry is made and answers (a bad request while the other
// attempt was in flight already did not stop the race; a pending retry is
// the same target working on the request).
func TestBadRequestKeepsAPendingRetry(t *testing.T) {
	obs := newRefusalEnded("fallback")
	transient := obs.of("fallback")
	b := setupObserved(t, race.Route{HedgeAfter: 10 * time.Millisecond}, nil, obs,
		provSpec{name: "primary", respond: func(int, *providers.Request) providers.Step {
			<-transient // the hedge's 503 has ended: its retry is pending
			return providers.Step{Status: 400}
		}},
		provSpec{name: "fallback", maxRetries: 1, respond: func(call int, _ *providers.Request) providers.Step {
			if call == 1 {
				return providers.Step{Status: 503, RetryAfter: refusalRetryAfter}
			}
			return providers.Step{Output: validTriage}
		}},
	)
	j := b.waitSettled(t, b.submit(t).ID)
	if j.State != store.JobSucceeded || b.prov["fallback"].Calls() != 2 {
		t.Fatalf("job %s (error %s), fallback calls %d; want succeeded by the fallback's retry", j.State, refusalJobError(j), b.prov["fallback"].Calls())
	}
}

// A refusal while another target works on the request closes the race to
// targets not yet tried: when that target's retry then fails too, the job
// fails with both reasons, and the third target is never called (no
// failover, no hedge to it).
func TestCallerFaultRefusalTriesNoNewTarget(t *testing.T) {
	obs := newRefusalEnded("fallback")
	transient := obs.of("fallback")
	b := setupObserved(t, race.Route{HedgeAfter: 10 * time.Millisecond}, nil, obs,
		provSpec{name: "primary", respond: func(int, *providers.Request) providers.Step {
			<-transient // the hedge's 503 has ended: its retry is pending
			return refusalStep(providers.KindContentPolicy, "flagged by the safety system")
		}},
		provSpec{name: "fallback", maxRetries: 1, respond: func(call int, _ *providers.Request) providers.Step {
			if call == 1 {
				return providers.Step{Status: 503, RetryAfter: refusalRetryAfter}
			}
			return providers.Step{Status: 503}
		}},
		provSpec{name: "spare", respond: ok(validTriage)},
	)
	j := b.waitSettled(t, b.submit(t).ID)
	if j.State != store.JobFailed || b.prov["fallback"].Calls() != 2 || b.prov["spare"].Calls() != 0 {
		t.Fatalf("job %s, fallback calls %d, spare calls %d; want failed, 2, 0", j.State, b.prov["fallback"].Calls(), b.prov["spare"].Calls())
	}
	if j.Error == nil || !strings.Contains(*j.Error, "content_policy") || !strings.Contains(*j.Error, "fallback: unavailable") {
		t.Fatalf("error %s, want both the refusal and the fallback's failure", refusalJobError(j))
	}
}
