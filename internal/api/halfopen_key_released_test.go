package api_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/routerhq/router/internal/breaker"
	"github.com/routerhq/router/internal/race"
)

// While a target's breaker is half-open, a request whose key holds a job is
// let through unplanned, to replay it without taking the probe
// (heldBeforePlan). Should the key's retention pass between that look-up and
// the claim, the request is a new job: it used to be stored pending with no
// plan (202), past the breaker, even while another request held the only
// probe — where a new job is refused 503 and nothing stored. It is now
// planned as the new job it is: refused while the probe is taken, created
// with the probe when it is free. Found by review.
func TestHalfOpenReplayWhoseKeyExpiresBeforeItsClaim(t *testing.T) {
	b, set, changes, tr := keyReleasedSetup(t)
	bodies := map[string]string{"ho-free": triageBody("Probe free"), "ho-taken": triageBody("Probe taken")}
	first := map[string]string{}
	for key, body := range bodies {
		r := b.create(t, acmeKey, key, body, "Prefer", "wait=30")
		if r.status != http.StatusCreated || r.body["state"] != "succeeded" {
			t.Fatalf("first job of %s: %d %s", key, r.status, r.raw)
		}
		first[key] = r.job()
	}
	resend := func(key string, hdr ...string) reply {
		t.Helper()
		k := key
		tr.key.Store(&k)
		r := b.create(t, acmeKey, key, bodies[key], hdr...)
		if !tr.fired.Load() {
			t.Fatalf("%s: the key's retention was not ended between its look-up and its claim", key)
		}
		tr.fired.Store(false)
		return r
	}

	// The probe free: the request, a new job, takes it and runs.
	halfOpenPrimary(t, set, changes)
	r := resend("ho-free", "Prefer", "wait=30")
	if r.status != http.StatusCreated || r.body["state"] != "succeeded" || r.job() == first["ho-free"] {
		t.Fatalf("resend whose key expired after its look-up, the probe free: %d %s; want 201, a new job that succeeded", r.status, r.raw)
	}
	closedAgain(t, changes, "the new job's success did not close the breaker: it did not run as its probe")

	// The probe taken by another request: the new job is refused, nothing stored.
	halfOpenPrimary(t, set, changes)
	releaseProbe, ok, why := set.Admit("primary")
	if !ok {
		t.Fatalf("the half-open breaker refused its probe: %s", why)
	}
	t.Cleanup(func() { releaseProbe(race.OutcomeFailure) })
	r = resend("ho-taken")
	if r.status != http.StatusServiceUnavailable || !strings.Contains(string(r.raw), "no-eligible-provider") {
		t.Fatalf("resend whose key expired after its look-up, the probe taken: %d %s; want the 503 no-eligible-provider", r.status, r.raw)
	}
	if n := b.count(t, `SELECT count(*) FROM jobs WHERE idempotency_key = 'ho-taken'`); n != 1 {
		t.Fatalf("%d jobs for the key; want 1, nothing stored by the refusal", n)
	}
}

// keyReleasedSetup is the set-up of the half-open replay tests: a breaker
// set whose primary opens at one failure (its changes on changes), and a
// router whose keys' retention can be ended between a request's key look-up
// and its claim (tr).
func keyReleasedSetup(t *testing.T) (b *bundle, set *breaker.Set, changes chan breaker.Change, tr *expireAfterKeyHeld) {
	t.Helper()
	changes = make(chan breaker.Change, 64)
	set = breaker.New(map[string]breaker.Settings{"primary": {ConsecutiveFailures: 1, OpenFor: time.Millisecond}},
		breaker.Options{OnChange: func(c breaker.Change) {
			select {
			case changes <- c:
			default:
			}
		}})
	t.Cleanup(set.Close)
	tr = &expireAfterKeyHeld{}
	b = setup(t, options{admission: set, tracer: tr, retention: time.Hour})
	tr.pool.Store(b.db.Pool)
	return b, set, changes, tr
}
