package providers

import (
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// ParseRetryAfter reads how long a provider asks us to wait after an
// error response of this status: `retry-after-ms` (milliseconds, sent by
// OpenAI and Azure) when present and valid, else `Retry-After` as
// delay-seconds or an HTTP-date relative to now (a date in the past gives 0).
// When neither header gives a usable value and the status is 429, it is the
// longest reset of the rate-limit budgets the response says are exhausted
// (rateLimitReset), or the reset Anthropic's anthropic-ratelimit-*-reset
// times give (anthropicRateLimitReset, read first): OpenAI and Azure answer
// a 429 for an exhausted daily budget without Retry-After, and a proxy may
// strip Anthropic's. Another status says nothing of a budget, even
// with the headers every response of such a provider carries. It returns 0
// when nothing gives a wait.
func ParseRetryAfter(status int, h http.Header, now time.Time) time.Duration {
	if d, ok := retryAfterHeader(h, now); ok {
		return d
	}
	if status != http.StatusTooManyRequests {
		return 0
	}
	if d, ok := anthropicRateLimitReset(h, now); ok {
		return d
	}
	return rateLimitReset(h)
}

// retryAfterHeader is ParseRetryAfter's reading of `retry-after-ms` and
// `Retry-After`; ok is false when neither gives a usable value.
func retryAfterHeader(h http.Header, now time.Time) (time.Duration, bool) {
	if v := strings.TrimSpace(h.Get("retry-after-ms")); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil && ms >= 0 && !math.IsInf(ms, 0) {
			return clampDuration(ms * float64(time.Millisecond)), true
		}
	}
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0, false
	}
	if secs, err := strconv.ParseFloat(v, 64); err == nil {
		if secs < 0 || math.IsInf(secs, 0) || math.IsNaN(secs) {
			return 0, false
		}
		return clampDuration(secs * float64(time.Second)), true
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(t.Sub(now), 0), true
	}
	return 0, false
}

// rateLimitBudgets are the budgets OpenAI (and Azure, Groq and others after
// it) report in x-ratelimit-remaining-* and x-ratelimit-reset-* headers.
var rateLimitBudgets = []string{"requests", "tokens"}

// rateLimitReset is the longest x-ratelimit-reset-{requests,tokens} among the
// budgets whose x-ratelimit-remaining-* is 0: when the exhausted budget
// refills. A budget not exhausted says nothing of when the refused request
// may pass, and is ignored. A reset is read as a Go duration ("6m0s",
// "120ms", "1m30.951s", OpenAI's form) or a plain non-negative number of
// seconds up to a day (maxResetSeconds); anything else (a larger number,
// such as a Unix time, or a date) is ignored. 0 when none.
func rateLimitReset(h http.Header) time.Duration {
	var longest time.Duration
	for _, b := range rateLimitBudgets {
		left, err := strconv.ParseFloat(strings.TrimSpace(h.Get("x-ratelimit-remaining-"+b)), 64)
		if err != nil || left != 0 {
			continue
		}
		if d, ok := resetDuration(h.Get("x-ratelimit-reset-" + b)); ok && d > longest {
			longest = d
		}
	}
	return longest
}

// maxResetSeconds is the largest plain number an x-ratelimit-reset-* value
// is read as seconds: a day, the longest budget (requests per day) such a
// header resets. A larger number is no wait a provider means: a Unix time
// (1796000000) read as seconds is some 57 years, beyond any max_retry_after,
// and would fail over a 429 that a retry after the real reset passes.
const maxResetSeconds = 24 * 60 * 60

// resetDuration reads one x-ratelimit-reset-* value (rateLimitReset).
func resetDuration(v string) (time.Duration, bool) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, false
	}
	if secs, err := strconv.ParseFloat(v, 64); err == nil {
		if secs < 0 || secs > maxResetSeconds || math.IsNaN(secs) {
			return 0, false
		}
		return clampDuration(secs * float64(time.Second)), true
	}
	if d, err := time.ParseDuration(v); err == nil && d >= 0 {
		return d, true
	}
	return 0, false
}

func clampDuration(ns float64) time.Duration {
	if ns >= math.MaxInt64 {
		return time.Duration(math.MaxInt64)
	}
	return time.Duration(ns)
}
