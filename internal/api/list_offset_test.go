package api_test

import (
	"net/http"
	"testing"
)

// created_after/created_before with a positive UTC offset, the '+' written
// as is in the URL (curl "...?created_after=2026-01-02T15:04:05+01:00"), arrive
// with a space in its place after query decoding. That is still the RFC 3339
// time the caller meant, not a malformed one.
func TestListJobsCreatedAfterWithUnencodedPlusOffset(t *testing.T) {
	b := setup(t, options{})
	b.create(t, acmeKey, "k1", triageBody("one"), "Prefer", "wait=10")
	for _, tc := range []struct {
		query string
		n     int
	}{
		{"?created_after=2000-01-01T00:00:00+01:00", 1},
		{"?created_after=2000-01-01T00:00:00%2B01:00", 1},
		{"?created_before=2000-01-01T00:00:00.5+05:30", 0},
		{"?created_before=2999-01-01T00:00:00+01:00", 1},
	} {
		if p := b.list(t, acmeKey, tc.query); len(p.Data) != tc.n {
			t.Errorf("GET /v1/jobs%s: %d jobs, want %d", tc.query, len(p.Data), tc.n)
		}
	}
	// A space as the date and time's separator is RFC 3339's too (§5.6's
	// note: TestListTakesSpaceSeparatedTimes); a space before an
	// offset that is not one is still malformed.
	for _, q := range []string{"?created_after=2000-01-01T00:00:00%2001", "?created_after=2000-01-01T00:00:00%2001:0"} {
		if r := b.do(t, "GET", "/v1/jobs"+q, acmeKey, ""); r.status != http.StatusBadRequest {
			t.Errorf("GET /v1/jobs%s: %d, want 400", q, r.status)
		}
	}
}
