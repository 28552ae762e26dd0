package race_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/race"
	"github.com/routerhq/router/internal/store"
)

// unusedAdmission admits every attempt; each admission of target handed
// back unused (OutcomeIgnore: the attempt it admitted was not created) is
// told to unused with its number (the k-th admission of target), in the
// orchestrator's goroutine: the race waits for it to return.
type unusedAdmission struct {
	target string
	unused func(k int)
	mu     sync.Mutex
	seen   map[string]int
}

func (a *unusedAdmission) Admit(p string) (func(race.Outcome), bool, string) {
	a.mu.Lock()
	a.seen[p]++
	k := a.seen[p]
	a.mu.Unlock()
	return func(o race.Outcome) {
		if p == a.target && o == race.OutcomeIgnore {
			a.unused(k)
		}
	}, true, ""
}

// admitted is how many times target was admitted.
func (a *unusedAdmission) admitted(target string) int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.seen[target]
}

// providerEnded closes ended when provider's attempt ends in state.
type providerEnded struct {
	nopRefusalObserver
	provider, state string
	once            sync.Once
	ended           chan struct{}
}

func (o *providerEnded) AttemptFinished(provider, _, state string, _ providers.Kind, _ time.Duration, _ providers.Usage) {
	if provider == o.provider && state == o.state {
		o.once.Do(func() { close(o.ended) })
	}
}

// docs/race.md ("Attempt outcomes and deadlines"): while other attempts are
// in flight, a retry that comes due is tried although an attempt went
// unknown; the store refuses it while the attempt is unknown "and starts it
// once the attempt has been resolved". A retry the store refused
// (ErrAttemptBlocked) is kept ready, not dropped: once the unknown attempt is
// resolved and the sibling in flight ends, the retry is made.
func TestRetryRefusedWhileBlockedIsMadeOnceResolved(t *testing.T) {
	refused := make(chan struct{})
	adm := &unusedAdmission{target: "third", seen: map[string]int{}, unused: func(k int) {
		if k == 2 { // the retry
			close(refused)
		}
	}}
	obs := &providerEnded{provider: "primary", state: store.AttemptUnknown, ended: make(chan struct{})}
	thirdCalled := make(chan struct{})
	secondGo := make(chan struct{})
	var thirdOnce sync.Once
	b := setupObserved(t, race.Route{HedgeAfter: 10 * time.Millisecond, MaxInflight: 3, MaxAttempts: 6}, adm, obs,
		provSpec{name: "primary", respond: func(int, *providers.Request) providers.Step {
			<-thirdCalled // silent until the second hedge is in flight
			return providers.Step{Error: &providers.Error{Kind: providers.KindTimeout, OutcomeUnknown: true,
				Message: "no response byte before the first-byte timeout"}}
		}},
		provSpec{name: "second", respond: func(int, *providers.Request) providers.Step {
			<-secondGo // in flight all along, silent: hedged by third
			return providers.Step{Status: 503}
		}},
		provSpec{name: "third", maxRetries: 1, respond: func(call int, _ *providers.Request) providers.Step {
			if call == 1 {
				thirdOnce.Do(func() { close(thirdCalled) })
				<-obs.ended // the primary is unknown in the database before this fails
				return providers.Step{Status: 503}
			}
			return providers.Step{Output: validTriage}
		}},
	)
	letSecondEnd := releaser(t, secondGo)
	job := b.submit(t)
	awaitSignal(t, refused, "third's retry refused while the primary is unknown")
	resolveUnknown(t, b, job.ID, "primary")
	letSecondEnd() // second fails: its end is the race's next event

	j := b.waitSettled(t, job.ID)
	if j.State != store.JobSucceeded || b.prov["third"].Calls() != 2 {
		t.Fatalf("job %s (error %s), attempts %v, third called %d times: want third's retry made once the block was lifted, and the job succeeded",
			j.State, refusalJobError(j), attemptStates(j), b.prov["third"].Calls())
	}
	// Kept without a loop of its own: asked for again at second's end only.
	if n := adm.admitted("third"); n != 3 {
		t.Fatalf("third admitted %d times, want 3: its hedge, its retry refused while blocked, the retry made at second's end", n)
	}
}

// awaitSignal waits for ch to be closed; what names it when it never is.
func awaitSignal(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(hangBound):
		t.Fatalf("not seen within %s: %s", hangBound, what)
	}
}

// releaser returns a func that closes ch once; a test that fails before
// calling it has it called at cleanup, before the bundle stops, so no call
// or race is left waiting on ch.
func releaser(t *testing.T, ch chan struct{}) func() {
	var once sync.Once
	release := func() { once.Do(func() { close(ch) }) }
	t.Cleanup(release)
	return release
}

// resolveUnknown resolves provider's unknown attempt of the job failed, as an
// operator does.
func resolveUnknown(t *testing.T, b *bundle, jobID, provider string) {
	t.Helper()
	j := b.job(t, jobID)
	a := attemptBy(j, provider)
	if a == nil || a.State != store.AttemptUnknown {
		t.Fatalf("set-up: %s's attempt %+v, want unknown", provider, a)
	}
	if _, err := b.st.ResolveAttempt(context.Background(), store.Resolution{Owner: "acme", JobID: jobID, Seq: a.Seq,
		Outcome: "failed", Note: "operator: the provider has no record"}); err != nil {
		t.Fatal(err)
	}
}

// As above, but the retry is still refused when the last attempt in flight
// ends, and the unknown attempt is resolved only then, before the race's
// blocked settle: the settle finds the block lifted (store.ErrUnblocked) and
// the race goes on with the retry it kept — not failing the job with the
// retry unused, and not failing over to a target beside it ("the race goes on
// with that retry rather than failing over").
func TestRetryRefusedWithNothingInFlightIsMadeOnceResolved(t *testing.T) {
	refused, refusedAgain, resolved := make(chan struct{}), make(chan struct{}), make(chan struct{})
	adm := &unusedAdmission{target: "third", seen: map[string]int{}, unused: func(k int) {
		switch k {
		case 2: // the retry, when due
			close(refused)
		case 3: // the retry, tried again at second's end
			close(refusedAgain)
			<-resolved // the race's blocked settle comes after this
		}
	}}
	obs := &providerEnded{provider: "primary", state: store.AttemptUnknown, ended: make(chan struct{})}
	thirdCalled := make(chan struct{})
	secondGo := make(chan struct{})
	var thirdOnce sync.Once
	b := setupObserved(t, race.Route{HedgeAfter: 10 * time.Millisecond, MaxInflight: 3, MaxAttempts: 8}, adm, obs,
		provSpec{name: "primary", respond: func(int, *providers.Request) providers.Step {
			<-thirdCalled
			return providers.Step{Error: &providers.Error{Kind: providers.KindTimeout, OutcomeUnknown: true,
				Message: "no response byte before the first-byte timeout"}}
		}},
		provSpec{name: "second", respond: func(int, *providers.Request) providers.Step {
			<-secondGo
			return providers.Step{Status: 503}
		}},
		provSpec{name: "third", maxRetries: 1, respond: func(call int, _ *providers.Request) providers.Step {
			if call == 1 {
				thirdOnce.Do(func() { close(thirdCalled) })
				<-obs.ended
				return providers.Step{Status: 503}
			}
			return providers.Step{Output: validTriage}
		}},
		// Left to fail over to: hedged (and refused by the store) while the
		// primary is unknown; never a failover beside third's retry.
		provSpec{name: "fourth", respond: hang},
	)
	letSecondEnd, resolve := releaser(t, secondGo), releaser(t, resolved)
	job := b.submit(t)
	awaitSignal(t, refused, "third's retry refused when due")
	letSecondEnd() // second fails: its end tries the retry again, refused again
	awaitSignal(t, refusedAgain, "third's retry kept and refused again at second's end")
	resolveUnknown(t, b, job.ID, "primary")
	resolve()

	j := b.waitSettled(t, job.ID)
	if j.State != store.JobSucceeded || b.prov["third"].Calls() != 2 {
		t.Fatalf("job %s (error %s), attempts %v, third called %d times: want third's retry made once the blocked settle found the block lifted, and the job succeeded",
			j.State, refusalJobError(j), attemptStates(j), b.prov["third"].Calls())
	}
	for _, a := range j.Attempts {
		if a.Provider == "fourth" && a.Role == store.RoleFailover {
			t.Fatalf("attempts %v: a failover to fourth beside third's retry; the race goes on with the retry it kept", attemptStates(j))
		}
	}
	if n := adm.admitted("third"); n != 4 {
		t.Fatalf("third admitted %d times, want 4: its hedge, its retry refused twice (when due, at second's end), the retry made", n)
	}
}
