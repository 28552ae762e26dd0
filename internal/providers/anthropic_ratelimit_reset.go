package providers

import (
	"net/http"
	"strconv"
	"strings"
	"time"
)

// anthropicRateLimitPrefix begins the headers in which Anthropic reports
// each rate-limit budget of the account (requests, tokens, input-tokens,
// output-tokens, and others it may add): anthropic-ratelimit-<budget>-limit,
// -remaining, and -reset, the RFC 3339 time the budget is full again.
const anthropicRateLimitPrefix = "anthropic-ratelimit-"

// anthropicRateLimitReset is how long a 429 without retry-after waits by
// Anthropic's anthropic-ratelimit-<budget>-reset headers (rateLimitReset
// reads OpenAI's x-ratelimit-* ones): the latest reset of the budgets whose
// -remaining is 0, since the refused request passes only once each of those
// has refilled; when none says 0 (the request asked for more than a budget
// had left, or a proxy kept only the resets), the earliest reset given, the
// shortest wait after which a budget has refilled, so the retry is not held
// past a refill that may let it through. A reset in the past is 0; one too
// far ahead is bounded as Retry-After is (max_retry_after fails it over).
// A value that is not an RFC 3339 time (the unified-* headers' Unix
// seconds) is ignored. ok is false when no reset was read.
func anthropicRateLimitReset(h http.Header, now time.Time) (time.Duration, bool) {
	var exhausted, earliest time.Duration
	var anyExhausted, any bool
	for key, vals := range h {
		k := strings.ToLower(key)
		budget, isReset := strings.CutSuffix(strings.TrimPrefix(k, anthropicRateLimitPrefix), "-reset")
		if !isReset || !strings.HasPrefix(k, anthropicRateLimitPrefix) || budget == "" || len(vals) == 0 {
			continue
		}
		at, err := time.Parse(time.RFC3339, strings.TrimSpace(vals[0]))
		if err != nil {
			continue
		}
		d := max(at.Sub(now), 0)
		if left, err := strconv.ParseFloat(strings.TrimSpace(h.Get(anthropicRateLimitPrefix+budget+"-remaining")), 64); err == nil && left == 0 {
			if !anyExhausted || d > exhausted {
				exhausted = d
			}
			anyExhausted = true
		}
		if !any || d < earliest {
			earliest = d
		}
		any = true
	}
	if anyExhausted {
		return exhausted, true
	}
	return earliest, any
}
