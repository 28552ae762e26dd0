package config

import (
	"math"
	"strings"
	"testing"
	"time"
)

// A duration beyond time.Duration's range (about 292 years) was refused as
// "is not a duration (write it like 500ms, 10s or 24h)", and an integer
// beyond int64 as "is not an integer (write it in digits…)": both tell the
// user to write what they wrote. Each now says it is too long or too large,
// and what the most is. Found by review.
func TestOverlongValuesSayTheyAreTooLarge(t *testing.T) {
	t.Setenv("DATABASE_URL", "")
	for _, c := range []struct{ yaml, want, not string }{
		{"retention: {jobs: 3000000h}\n",
			`line 1: retention.jobs: "3000000h" is longer than the largest duration the router can hold (2562047h, about 292 years): write a shorter one`, "is not a duration"},
		{"retention: {jobs: 2562048h}\n", `"2562048h" is longer than the largest duration`, "is not a duration"},
		{"retention: {jobs: 100000000000000000000ns}\n", `is longer than the largest duration`, "is not a duration"},
		{"http: {max_body_bytes: 99999999999999999999}\n",
			`line 1: http.max_body_bytes: "99999999999999999999" is too large (at most 9223372036854775807): write a smaller number`, "is not an integer"},
		{"http: {max_body_bytes: -99999999999999999999}\n",
			`"-99999999999999999999" is too small (at least -9223372036854775808)`, "is not an integer"},
		// yaml.v3 reads it as the float -1e20 and converted it to the most
		// negative int64, which was then judged as if written.
		{"http: {max_body_bytes: -1e30}\n", `"-1e30" is too small (at least -9223372036854775808)`, "(-9223372036854775808) must be"},
		{"http: {max_body_bytes: 1e30}\n", `"1e30" is too large (at most 9223372036854775807)`, "is not an integer"},
		// Still refused as what they are: not a duration, not an integer.
		{"retention: {jobs: forever}\n", `"forever" is not a duration (write it like 500ms, 10s or 24h)`, "largest"},
		{"http: {max_body_bytes: 2MiB}\n", `"2MiB" is not an integer (write it in digits`, "too large"},
		{"http: {max_body_bytes: 1.5}\n", `"1.5" is not an integer`, "too large"},
	} {
		_, err := Parse([]byte(c.yaml))
		if err == nil {
			t.Errorf("%q: accepted", c.yaml)
			continue
		}
		if !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), c.not) {
			t.Errorf("%q: the error does not say %q (or says %q):\n%v", c.yaml, c.want, c.not, err)
		}
	}
}

// The largest duration stated is the largest time.Duration, in whole hours.
func TestMaxDurationHoursIsTimeDurations(t *testing.T) {
	if got := int64(math.MaxInt64 / int64(time.Hour)); got != maxDurationHours {
		t.Fatalf("the largest time.Duration is %dh, the message says %dh", got, maxDurationHours)
	}
	if _, err := Parse([]byte("retention: {jobs: 2562047h}\n")); err != nil && strings.Contains(err.Error(), "retention.jobs: \"2562047h\"") {
		t.Fatalf("the largest duration the message allows is refused as written: %v", err)
	}
}
