package race_test

import (
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/routerhq/router/internal/race"
	"github.com/routerhq/router/internal/store"
)

// peekThenTaken models a half-open breaker (of provider p, or of every
// provider when p is "") whose one probe a concurrent request takes between
// a plan's peek (State: admits) and its take (Admit): the next `taken`
// admissions are refused.
type peekThenTaken struct {
	mu    sync.Mutex
	p     string
	taken int
}

func (a *peekThenTaken) State(string) (bool, string) { return true, "" }

func (a *peekThenTaken) AdmitsIn(string) (time.Duration, bool) { return 0, false }

func (a *peekThenTaken) Admit(p string) (func(race.Outcome), bool, string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if (a.p == "" || p == a.p) && a.taken > 0 {
		a.taken--
		return nil, false, "circuit breaker half-open: its one probe is taken"
	}
	return func(race.Outcome) {}, true, ""
}

// planned is the job a plan is asked about (racetest's triage job).
func planned() *store.Job {
	return &store.Job{Operation: "triage", PromptVersion: "3", Route: "default",
		Input: json.RawMessage(`{"subject":"Login","body":"I cannot log in."}`)}
}

// A plan whose every target's breaker refuses at Admit, although its peek
// said it admits (a half-open breaker's probe taken meanwhile by another
// request), used to be ok with no first attempt: the API stored the job,
// which failed at once with no attempt. No target takes the job now, so the
// plan says so as when the peek sees it (SPEC §4.4: the API answers 503 and
// stores nothing), its routing naming the refusal; asked again once the
// probe is free, it plans the first attempt.
func TestPlanRefusedByBreakerAfterItsPeekIsNoEligibleProvider(t *testing.T) {
	adm := &peekThenTaken{taken: 1}
	b := setupWith(t, race.Route{Deadline: 30 * time.Second}, adm, provSpec{name: "primary", respond: ok(validTriage)})
	plan, routing, ok, err := b.runner.Plan(planned())
	if err != nil {
		t.Fatal(err)
	}
	if ok {
		first := (*store.FirstAttempt)(nil)
		if plan != nil {
			first = plan.First()
			plan.Discard()
		}
		t.Fatalf("plan ok with first attempt %+v, although no breaker admitted one: its job would fail at once with no attempt", first)
	}
	var decisions []race.Decision
	if err := json.Unmarshal(routing, &decisions); err != nil {
		t.Fatalf("routing %s: %v", routing, err)
	}
	if len(decisions) != 1 || decisions[0].Eligible || !strings.Contains(decisions[0].Reason, "probe is taken") {
		t.Fatalf("routing %s: want the primary ineligible, its breaker's refusal as the reason", routing)
	}

	// The probe free again: the same job is planned, and runs.
	j := b.waitSettled(t, b.submit(t).ID)
	if j.State != store.JobSucceeded || len(j.Attempts) != 1 || j.Attempts[0].Provider != "primary" {
		t.Fatalf("job %s (%s), attempts %+v: want it won by the primary", j.State, derefString(j.Error), j.Attempts)
	}
}

// A plan whose primary's breaker refuses at Admit, after its peek said it
// admits, starts the job on the fallback: its routing says why the primary
// was skipped (SPEC §4.2), where it used to call the primary eligible only.
func TestPlanRoutingNamesTheBreakerThatRefusedThePrimary(t *testing.T) {
	adm := &peekThenTaken{p: "primary", taken: 1}
	b := setupWith(t, race.Route{Deadline: 30 * time.Second}, adm,
		provSpec{name: "primary", respond: ok(validTriage)}, provSpec{name: "fallback", respond: ok(validTriage)})
	j := b.waitSettled(t, b.submit(t).ID)
	if j.State != store.JobSucceeded || len(j.Attempts) != 1 || j.Attempts[0].Provider != "fallback" {
		t.Fatalf("setup: job %s, attempts %+v", j.State, j.Attempts)
	}
	var decisions []race.Decision
	if err := json.Unmarshal(j.Routing, &decisions); err != nil {
		t.Fatalf("routing %s: %v", j.Routing, err)
	}
	found := false
	for _, d := range decisions {
		found = found || d.Provider == "primary" && d.Event == "breaker_refused" && strings.Contains(d.Reason, "probe is taken")
	}
	if !found {
		t.Fatalf("routing %s: the primary was skipped by its breaker, but routing does not say so", j.Routing)
	}
}
