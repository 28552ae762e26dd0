package api

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// probingAgain is what an open circuit breaker's routing reason says before
// the time left until it half-opens (internal/breaker's refusal: "circuit
// breaker open after 5 consecutive failures; probing again in 25s").
const probingAgain = "probing again in "

// noEligibleRetryAfter bounds the Retry-After of a 503 no_eligible_provider.
// Without an open breaker's time to read (a half-open breaker whose probes
// are all taken, a conformance gate that refuses), the answer says 30 s, the
// breakers' default open_for.
const (
	noEligibleRetryMin      = 1
	noEligibleRetryMax      = 60
	noEligibleRetryFallback = 30
)

// setNoEligibleRetryAfter sets the Retry-After of a 503 no_eligible_provider
// from routing, the route's decisions: the seconds until the first of its
// open breakers half-opens, at least 1, at most 60 (a breaker that stays open
// longer is asked again then). elapsed is how long ago the decisions were
// made (0 for the request's own; a settled job's are as old as the job's
// end).
func setNoEligibleRetryAfter(w http.ResponseWriter, routing json.RawMessage, elapsed time.Duration) {
	w.Header().Set("Retry-After", strconv.Itoa(noEligibleRetryAfter(routing, elapsed)))
}

func noEligibleRetryAfter(routing json.RawMessage, elapsed time.Duration) int {
	var decisions []struct {
		Eligible bool   `json:"eligible"`
		Reason   string `json:"reason"`
	}
	_ = json.Unmarshal(routing, &decisions)
	earliest, found := time.Duration(0), false
	for _, d := range decisions {
		if d.Eligible {
			continue
		}
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
	if !found {
		return noEligibleRetryFallback
	}
	switch left := earliest - elapsed; {
	case left >= noEligibleRetryMax*time.Second:
		return noEligibleRetryMax
	case left <= 0:
		return noEligibleRetryMin
	default:
		return max(int((left+time.Second-1)/time.Second), noEligibleRetryMin) // rounded up
	}
}
