package race_test

import (
	"testing"
	"time"

	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/race"
	"github.com/routerhq/router/internal/store"
)

// openFor is an Admission whose breakers refuse the providers in open, each
// saying it admits again only after a minute (race.AdmitDelay), and admit the
// others.
type openFor struct{ open map[string]bool }

var _ race.AdmitDelay = openFor{}

func (a openFor) Admit(p string) (func(race.Outcome), bool, string) {
	if a.open[p] {
		return nil, false, "breaker open"
	}
	return func(race.Outcome) {}, true, ""
}

func (a openFor) AdmitsIn(p string) (time.Duration, bool) {
	if a.open[p] {
		return time.Minute, true
	}
	return 0, true
}

// A retry with less room before the deadline than its target's first-byte
// budget fails over only to a target that would be admitted: with the only
// other target's breaker open, the retry is the job's one chance and is made.
// It used to count the open target as one to fail over to, skip the retry,
// and fail the job with nothing started. Found by review.
func TestRetryIsMadeWhenTheFallbacksBreakerIsOpen(t *testing.T) {
	b := setupWith(t, race.Route{Deadline: 30 * time.Second}, openFor{open: map[string]bool{"fallback": true}},
		provSpec{name: "primary", maxRetries: 1, firstByte: time.Minute, respond: func(call int, _ *providers.Request) providers.Step {
			if call == 1 {
				return providers.Step{Status: 429, RetryAfter: 10 * time.Millisecond}
			}
			return providers.Step{Output: validTriage}
		}},
		provSpec{name: "fallback", respond: ok(validTriage)})
	j := b.waitSettled(t, b.submit(t).ID)
	if j.State != store.JobSucceeded || len(j.Attempts) != 2 || j.Attempts[1].Provider != "primary" || j.Attempts[1].State != store.AttemptWon {
		t.Fatalf("job %s (%s), attempts %+v: want the primary's retry to win, the fallback's breaker being open",
			j.State, derefString(j.Error), j.Attempts)
	}
}
