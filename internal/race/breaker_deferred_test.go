package race_test

import (
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/race"
	"github.com/routerhq/router/internal/store"
)

// countingSwitch is switchable that counts the admissions asked of each
// provider, and whose open providers may be set to admit again after a number
// of refused admissions (reopenAfter).
type countingSwitch struct {
	switchable
	mu          sync.Mutex
	asked       map[string]int
	reopenAfter map[string]int
	in          time.Duration // what AdmitsIn says of an open provider
}

func (a *countingSwitch) Admit(p string) (func(race.Outcome), bool, string) {
	a.mu.Lock()
	a.asked[p]++
	n := a.asked[p]
	a.mu.Unlock()
	rel, ok, why := a.switchable.Admit(p)
	if !ok {
		if after, set := a.reopenAfter[p]; set && n >= after {
			a.admit(p)
		}
	}
	return rel, ok, why
}

func (a *countingSwitch) AdmitsIn(p string) (time.Duration, bool) {
	if a.isOpen(p) {
		return a.in, true
	}
	return 0, true
}

func (a *countingSwitch) admissions(p string) int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.asked[p]
}

func newCountingSwitch(open string, in time.Duration) *countingSwitch {
	return &countingSwitch{switchable: switchable{open: map[string]bool{open: true}}, asked: map[string]int{}, reopenAfter: map[string]int{}, in: in}
}

// A target refused by its breaker at the plan is skipped by the first choice
// without asking its breaker again (routing just saw it refuse): the first
// attempt goes to the next eligible target, with one admission asked.
func TestPlanDoesNotAskADeferredTargetsBreaker(t *testing.T) {
	adm := newCountingSwitch("primary", time.Minute)
	b := setupWith(t, race.Route{Deadline: 30 * time.Second}, adm,
		provSpec{name: "primary", respond: ok(validTriage)},
		provSpec{name: "fallback", respond: ok(validTriage)})
	j := b.waitSettled(t, b.submit(t).ID)
	if j.State != store.JobSucceeded || len(j.Attempts) != 1 || j.Attempts[0].Provider != "fallback" {
		t.Fatalf("job %s, attempts %+v: want the fallback's one attempt to win", j.State, j.Attempts)
	}
	if n := adm.admissions("primary"); n != 0 {
		t.Fatalf("the primary's breaker was asked %d admissions: the plan's first choice must not ask a breaker routing saw refuse", n)
	}
}

// A target refused by its breaker at the plan, still refused when the race
// fails over to it, is named in the failed job's error with its breaker's
// refusal, as a target its breaker refused later in the race is.
func TestDeferredTargetsRefusalIsInTheJobsError(t *testing.T) {
	adm := newCountingSwitch("primary", time.Minute) // a minute: past the job's deadline, no wait
	b := setupWith(t, race.Route{Deadline: 30 * time.Second}, adm,
		provSpec{name: "primary", respond: ok(validTriage)},
		provSpec{name: "fallback", respond: func(int, *providers.Request) providers.Step { return providers.Step{Status: 500} }})
	j := b.waitSettled(t, b.submit(t).ID)
	why := derefString(j.Error)
	if j.State != store.JobFailed || !strings.Contains(why, "primary: skipped: ") || !strings.Contains(why, "circuit breaker open") {
		t.Fatalf("job %s, error %q: want it failed, its error naming the primary skipped by its breaker", j.State, why)
	}
	if n := adm.admissions("primary"); n == 0 {
		t.Fatalf("the primary's breaker was never asked again: want the failover to ask it")
	}
}

// A race whose only target left was refused by its breaker at the plan waits
// for that breaker (runLater) rather than failing, and the target, admitted
// then, wins; its routing decision is eligible once its breaker admitted it.
func TestRaceWaitsForATargetRefusedAtThePlan(t *testing.T) {
	adm := newCountingSwitch("primary", 20*time.Millisecond)
	adm.reopenAfter["primary"] = 1 // the failover's ask is refused, the next run's admitted
	b := setupWith(t, race.Route{Deadline: 30 * time.Second}, adm,
		provSpec{name: "primary", respond: ok(validTriage)},
		provSpec{name: "fallback", respond: func(int, *providers.Request) providers.Step { return providers.Step{Status: 500} }})
	j := b.waitSettled(t, b.submit(t).ID)
	if j.State != store.JobSucceeded {
		t.Fatalf("job %s, error %q, attempts %d: want it to wait for the primary's breaker and win there", j.State, derefString(j.Error), len(j.Attempts))
	}
	var ds []race.Decision
	if err := json.Unmarshal(j.Routing, &ds); err != nil {
		t.Fatal(err)
	}
	for _, d := range ds {
		if d.Provider == "primary" && d.Event == "" && !d.Eligible {
			t.Fatalf("routing %s: want the primary eligible, its breaker having admitted it", j.Routing)
		}
	}
}

// The same when the race admits the deferred target at once: its routing
// decision becomes eligible, recorded with its attempt.
func TestDeferredTargetAdmittedIsEligibleInRouting(t *testing.T) {
	adm := newCountingSwitch("primary", time.Minute)
	b := setupWith(t, race.Route{Deadline: 30 * time.Second}, adm,
		provSpec{name: "primary", respond: ok(validTriage)},
		provSpec{name: "fallback", respond: func(int, *providers.Request) providers.Step {
			adm.admit("primary")
			return providers.Step{Status: 500}
		}})
	j := b.waitSettled(t, b.submit(t).ID)
	if j.State != store.JobSucceeded {
		t.Fatalf("job %s, error %q", j.State, derefString(j.Error))
	}
	var ds []race.Decision
	if err := json.Unmarshal(j.Routing, &ds); err != nil {
		t.Fatal(err)
	}
	for _, d := range ds {
		if d.Provider == "primary" && (d.Event != "" || !d.Eligible || d.Reason != "") {
			t.Fatalf("routing %s: want the primary's one decision eligible, its breaker having admitted it", j.Routing)
		}
	}
}

// A target refused by its breaker at the plan and never asked again (the
// round's attempts reached max_attempts first) is named in the failed job's
// error all the same, with its breaker's refusal.
func TestDeferredTargetNotAskedIsInTheJobsError(t *testing.T) {
	adm := newCountingSwitch("primary", time.Minute)
	b := setupWith(t, race.Route{Deadline: 30 * time.Second, MaxAttempts: 1}, adm,
		provSpec{name: "primary", respond: ok(validTriage)},
		provSpec{name: "fallback", respond: func(int, *providers.Request) providers.Step { return providers.Step{Status: 500} }})
	j := b.waitSettled(t, b.submit(t).ID)
	why := derefString(j.Error)
	if j.State != store.JobFailed || !strings.Contains(why, "primary: skipped: circuit breaker open") {
		t.Fatalf("job %s, error %q: want it failed, its error naming the primary skipped by its breaker", j.State, why)
	}
	if n := adm.admissions("primary"); n != 0 {
		t.Fatalf("set-up: the primary's breaker was asked %d admissions; want none (max_attempts reached first)", n)
	}
}
