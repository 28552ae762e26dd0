package api

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/routerhq/router/internal/race"
)

// probingAgain is what an open circuit breaker's routing reason says before
// the time left until it half-opens (internal/breaker's refusal: "circuit
// breaker open after 5 consecutive failures; probing again in 25s").
const probingAgain = "probing again in "

// noEligibleRetryAfter bounds the Retry-After of a 503 no_eligible_provider.
// A half-open breaker whose probes are all taken frees one within moments
// (1 s). A refusal that does not clear by itself (a conformance gate that
// refuses: an operator must run the suite) gets no Retry-After: the SDKs
// wait as long as it says before their resends, and a long one would hold
// the caller for a minute only to fail the same way.
const (
	noEligibleRetryMin      = 1
	noEligibleRetryMax      = 60
	noEligibleRetryHalfOpen = 1
	halfOpenTaken           = "circuit breaker half-open"
	// The gate could not read its results (a database that did not answer
	// in time, its reason beginning race.GateUnread): the next read will
	// likely succeed.
	noEligibleRetryUnread = 2
)

// setNoEligibleRetryAfter sets the Retry-After of a 503 no_eligible_provider
// from routing, the route's decisions: the seconds until the first of its
// open breakers half-opens, at least 1, at most 60 (a breaker that stays open
// longer is asked again then). elapsed is how long ago the decisions were
// made (0 for the request's own; a settled job's are as old as the job's
// end).
func setNoEligibleRetryAfter(w http.ResponseWriter, routing json.RawMessage, elapsed time.Duration) {
	if s := noEligibleRetryAfter(routing, elapsed); s > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(s))
	}
}

func noEligibleRetryAfter(routing json.RawMessage, elapsed time.Duration) int {
	var decisions []struct {
		Eligible bool   `json:"eligible"`
		Reason   string `json:"reason"`
	}
	_ = json.Unmarshal(routing, &decisions)
	earliest, found, unread := time.Duration(0), false, false
	for _, d := range decisions {
		if d.Eligible {
			continue
		}
		if strings.HasPrefix(d.Reason, halfOpenTaken) {
			// A probe in flight ends within moments: a time like an open
			// breaker's (1 s), weighed with theirs as the race weighs it
			// (breakerWaitHalfOpen), not only when none says when.
			if left := noEligibleRetryHalfOpen * time.Second; !found || left < earliest {
				earliest, found = left, true
			}
			continue
		}
		unread = unread || strings.HasPrefix(d.Reason, race.GateUnread)
		_, rest, ok := strings.Cut(d.Reason, probingAgain)
		if !ok {
			continue
		}
		if end := strings.IndexAny(rest, " ;),"); end >= 0 {
			rest = rest[:end]
		}
		left, err := time.ParseDuration(rest)
		if err != nil {
			continue
		}
		if !found || left < earliest {
			earliest, found = left, true
		}
	}
	var after int
	switch left := earliest - elapsed; {
	case !found:
		after = 0 // nothing says when: no Retry-After
	case left >= noEligibleRetryMax*time.Second:
		after = noEligibleRetryMax
	case left <= 0:
		after = noEligibleRetryMin
	default:
		after = max(int((left+time.Second-1)/time.Second), noEligibleRetryMin) // rounded up
	}
	if unread && (after == 0 || noEligibleRetryUnread < after) {
		// A gate that could not read its results may admit within
		// moments: weighed with the breakers' times, not only when none
		// says when (found by review, rconf14: a breaker open 50 s more
		// beside it made the caller wait 50 s).
		after = noEligibleRetryUnread
	}
	return after
}

// noEligibleAdvice tells the caller of a 503 no-eligible-provider what a
// retry can do: after Retry-After when a breaker says when it probes again;
// otherwise (conformance missing or stale) nothing until the router's
// operator acts, so the caller is not told to retry in a loop.
func noEligibleAdvice(routing json.RawMessage) string {
	if noEligibleRetryAfter(routing, 0) > 0 {
		return "retry after Retry-After with the same Idempotency-Key"
	}
	return "this does not clear by itself: a retry succeeds once the router's operator has made a provider eligible (for conformance, `router conformance run`); the same Idempotency-Key may be used then"
}
