package race_test

import (
	"sync"
	"testing"
	"time"

	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/race"
	"github.com/routerhq/router/internal/store"
)

// ignoredAdmission admits every attempt and calls ignored (once) when an
// admission of target is handed back unused (OutcomeIgnore).
type ignoredAdmission struct {
	target  string
	ignored func()
}

func (a *ignoredAdmission) Admit(p string) (func(race.Outcome), bool, string) {
	return func(o race.Outcome) {
		if p == a.target && o == race.OutcomeIgnore {
			a.ignored()
		}
	}, true, ""
}

// Found while checking review rrace12's suspicion 1 (the same mechanism:
// what an attempt created while the job was blocked is sent to was decided
// before the resolutions were read). SPEC §6.3, docs/race.md: an attempt
// resolved `failed` while its job's race is live is acted on "as it would have
// after that failure live". A context-length rejection skips every target
// with no more room for the prompt (skipTooLongAfter; prepare does the same
// for a resumed job). Here the primary (an 8000-token window) went unknown
// with its hedge in flight, and is resolved as too long; the silent hedge is
// then hedged on third, whose window is no larger than the primary's. Before
// the fix that request was sent to third all the same — a paid call the race
// knew would be refused; the live race, and a resumed one, skip third.
func TestResolvedContextLengthWhileLiveSkipsTooSmallTarget(t *testing.T) {
	for _, tc := range []struct {
		name   string
		fourth bool // a fourth target with a larger window: the hedge goes to it instead
	}{
		{name: "no target left with more room", fourth: false},
		{name: "a larger target left", fourth: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			obs := newHoldFinished(1) // the primary's end
			fallbackCalled, decided := make(chan struct{}), make(chan struct{})
			var fallbackOnce, decidedOnce sync.Once
			decide := func() { decidedOnce.Do(func() { close(decided) }) }
			var adm race.Admission
			if !tc.fourth { // else the hedge on fourth decides
				adm = &ignoredAdmission{target: "third", ignored: decide}
			}
			specs := []provSpec{
				{name: "primary", window: 8000, respond: func(int, *providers.Request) providers.Step {
					<-fallbackCalled // ends only once its hedge is in flight (max_inflight 2: no other hedge until its end is seen)
					return providers.Step{Error: &providers.Error{Kind: providers.KindTimeout, OutcomeUnknown: true,
						Message: "no response byte before the first-byte timeout"}}
				}},
				{name: "fallback", window: 200000, respond: func(int, *providers.Request) providers.Step {
					fallbackOnce.Do(func() { close(fallbackCalled) })
					<-decided // silent until the hedge was sent (or, on third, left unsent)
					return providers.Step{Output: validTriage}
				}},
				{name: "third", window: 8000, respond: func(int, *providers.Request) providers.Step {
					decide()
					return providers.Step{Error: &providers.Error{Kind: providers.KindContextLength, StatusCode: 400,
						Message: "maximum context length exceeded"}}
				}},
			}
			if tc.fourth {
				specs = append(specs, provSpec{name: "fourth", window: 200000, respond: func(int, *providers.Request) providers.Step {
					decide()
					return providers.Step{Output: validTriage}
				}})
			}
			b := setupObserved(t, race.Route{HedgeAfter: 50 * time.Millisecond, MaxInflight: 2, MaxAttempts: 5}, adm, obs, specs...)
			job := b.submit(t)
			<-obs.held // the primary's attempt is recorded unknown; its hedge is in flight
			if _, err := b.st.ResolveAttempt(t.Context(), store.Resolution{JobID: job.ID, Seq: 1, Outcome: "failed",
				Note: "reconciled: the provider refused the request as too long",
				Error: map[string]any{"kind": "context_length_exceeded", "fault": "caller", "action": "failover", "status": 400,
					"message": "provider primary: context_length_exceeded: maximum context length exceeded"},
			}); err != nil {
				t.Fatal(err)
			}
			close(obs.release)

			j := b.waitSettled(t, job.ID)
			if n := b.prov["third"].Calls(); n != 0 || j.State != store.JobSucceeded {
				t.Fatalf("job %s (%s), attempts %v: third called %d time(s) after the primary's attempt was resolved as too long "+
					"for a window no smaller than third's; want third skipped, as the live race skips it, and the job succeeded",
					j.State, derefString(j.Error), attemptStates(j), n)
			}
			if tc.fourth {
				if a := attemptBy(j, "fourth"); a == nil || a.Role != store.RoleHedge || b.prov["fourth"].Calls() != 1 {
					t.Fatalf("fourth's attempt %+v, called %d time(s): want the silent fallback hedged on fourth once, in third's place",
						a, b.prov["fourth"].Calls())
				}
			}
		})
	}
}
