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

// A target its breaker refused at first, then admitted and tried, kept the
// refusal as its reason when its attempt ended without one of its own (a
// failure writes its own, an unknown outcome or a cancellation does not):
// the primary, refused at the plan (its half-open probe taken), was tried
// as the failover after the fallback failed, its call ended cancelled, and
// the job's error said "primary: skipped: circuit breaker half-open", as if
// it had never been called. Admitted, the target's refusal is no longer its
// reason: what its attempt ends with is.
func TestBreakerSkipIsNotTheReasonOfATargetTriedLater(t *testing.T) {
	adm := &peekThenTaken{p: "primary", taken: 1}
	b := setupWith(t, race.Route{Deadline: 30 * time.Second}, adm,
		provSpec{name: "primary", respond: func(int, *providers.Request) providers.Step {
			return providers.Step{Error: &providers.Error{Kind: providers.KindCancelled, Message: "call cancelled"}}
		}},
		provSpec{name: "fallback", respond: func(int, *providers.Request) providers.Step { return providers.Step{Status: 500} }})
	j := b.waitSettled(t, b.submit(t).ID)
	if n := len(j.Attempts); n != 2 || j.Attempts[0].Provider != "fallback" || j.Attempts[1].Provider != "primary" ||
		j.Attempts[1].State != store.AttemptCancelled {
		t.Fatalf("set-up: attempts %+v; want the fallback's (the primary refused by its breaker), then the primary's, cancelled", j.Attempts)
	}
	why := derefString(j.Error)
	if j.State != store.JobFailed || strings.Contains(why, "skipped") || !strings.Contains(why, "fallback: server_error") {
		t.Fatalf("job %s, error %q: want failed, with the fallback's failure and no word of the primary being skipped (it was tried)", j.State, why)
	}
}

// refuseSecond refuses provider p's second Admit and admits everything else;
// its breakers' states admit, and say they admit now (AdmitDelay).
type refuseSecond struct {
	mu    sync.Mutex
	p     string
	calls int
}

func (a *refuseSecond) State(string) (bool, string) { return true, "" }

func (a *refuseSecond) AdmitsIn(string) (time.Duration, bool) { return 0, true }

func (a *refuseSecond) Admit(p string) (func(race.Outcome), bool, string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if p == a.p {
		if a.calls++; a.calls == 2 {
			return nil, false, "circuit breaker open"
		}
	}
	return func(race.Outcome) {}, true, ""
}

// The reverse: a target tried and failed, whose retry its breaker refused,
// was said in the job's error to have been skipped by its breaker, its
// attempt's failure (the 429 that asked for the retry) lost. The failure
// stays its reason, and the refusal says why it was not retried.
func TestRefusedRetryKeepsTheAttemptsFailure(t *testing.T) {
	b := setupWith(t, race.Route{Deadline: 30 * time.Second}, &refuseSecond{p: "primary"},
		provSpec{name: "primary", maxRetries: 1, firstByte: 10 * time.Second, respond: func(int, *providers.Request) providers.Step {
			return providers.Step{Status: 429, RetryAfter: 10 * time.Millisecond}
		}},
		provSpec{name: "fallback", respond: func(int, *providers.Request) providers.Step { return providers.Step{Status: 500} }})
	j := b.waitSettled(t, b.submit(t).ID)
	if n := len(j.Attempts); n != 2 || j.Attempts[0].Provider != "primary" || j.Attempts[1].Provider != "fallback" {
		t.Fatalf("set-up: attempts %+v; want the primary's, then (its retry refused) the fallback's", j.Attempts)
	}
	why := derefString(j.Error)
	if j.State != store.JobFailed || !strings.Contains(why, "primary: rate_limited") || !strings.Contains(why, "not retried: circuit breaker open") ||
		strings.Contains(why, "skipped") {
		t.Fatalf("job %s, error %q: want failed, the primary's reason its 429, then why it was not retried (its breaker)", j.State, why)
	}
}
