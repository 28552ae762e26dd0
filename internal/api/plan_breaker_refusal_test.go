package api_test

import (
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/routerhq/router/internal/race"
)

// takenAtAdmit is a breaker set whose state admits every target but whose
// first admission refuses: a half-open breaker's one probe taken by another
// request between a plan's peek (State) and its take (Admit).
type takenAtAdmit struct {
	mu      sync.Mutex
	refused bool
}

func (a *takenAtAdmit) State(string) (bool, string) { return true, "" }

func (a *takenAtAdmit) Admit(string) (func(race.Outcome), bool, string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if !a.refused {
		a.refused = true
		return nil, false, "circuit breaker half-open: its one probe is taken"
	}
	return func(race.Outcome) {}, true, ""
}

// A new job whose only target's breaker refuses it at Admit, although its
// state admitted it a moment before, used to be stored with no attempt and
// failed at once. No provider can take it: it is answered 503
// no-eligible-provider and nothing is stored, as when the breaker's state
// refuses it (SPEC §4.4), so the key stays free and the same request, sent
// again once the probe is free, creates the job.
func TestJobRefusedByBreakerAtAdmitIsNotStored(t *testing.T) {
	b := setup(t, options{admission: &takenAtAdmit{}})
	body := triageBody("Probe taken at admit")
	r := b.create(t, acmeKey, "taken-at-admit", body, "Prefer", "wait=30")
	if r.status != http.StatusServiceUnavailable || !strings.Contains(string(r.raw), "no-eligible-provider") {
		t.Fatalf("job refused by its breaker at admit: %d %s; want 503 no-eligible-provider", r.status, r.raw)
	}
	if !strings.Contains(string(r.raw), "probe is taken") || r.header.Get("Retry-After") != "1" {
		t.Fatalf("503 %s (Retry-After %q): want the breaker's refusal in routing, and a retry after 1 s as for a half-open breaker whose probe is taken",
			r.raw, r.header.Get("Retry-After"))
	}
	if n := b.count(t, `SELECT count(*) FROM jobs WHERE idempotency_key = 'taken-at-admit'`); n != 0 {
		t.Fatalf("%d jobs stored for the refused request; want none", n)
	}
	r = b.create(t, acmeKey, "taken-at-admit", body, "Prefer", "wait=30")
	if r.status != http.StatusCreated || r.body["state"] != "succeeded" {
		t.Fatalf("the same request once the probe is free: %d %s; want 201, a job that succeeded", r.status, r.raw)
	}
}
