package api_test

import (
	"net/http"
	"strings"
	"testing"
)

// GET /v1/jobs's limit is "a whole number from 1 to 200" (docs/api.md):
// written in digits only. A sign (limit=%2B5 arrives as "+5"), a space or a
// decimal point is a 400 saying to write digits, not read as a number the
// caller did not write; digits, leading zeros included, are read as decimal.
func TestListLimitTakesPlainDigitsOnly(t *testing.T) {
	b := setup(t, options{})
	b.create(t, acmeKey, "digits-1", triageBody("one"), "Prefer", "wait=10")
	b.create(t, acmeKey, "digits-2", triageBody("two"), "Prefer", "wait=10")
	for _, q := range []string{"%2B1", "-0", "%201", "1%20", "1.0", "1e0", "0x1", "%2B0001"} {
		wantListRejectedAs(t, b, "?limit="+q, "Malformed limit",
			"limit must be a whole number from 1 to 200", "write it in digits only, without a sign")
	}
	// Out of range, but digits: told the range only.
	for _, q := range []string{"0", "201", "99999999999999999999999"} {
		r := b.do(t, "GET", "/v1/jobs?limit="+q, acmeKey, "")
		detail, _ := r.body["detail"].(string)
		if r.status != http.StatusBadRequest || strings.Contains(detail, "digits only") {
			t.Errorf("limit=%s: %d %s; want a 400 giving the range only", q, r.status, r.raw)
		}
	}
	if p := b.list(t, acmeKey, "?limit=001"); len(p.Data) != 1 || p.NextCursor == nil {
		t.Errorf("limit=001 lists %d jobs (next_cursor %v), want 1 and a next_cursor", len(p.Data), p.NextCursor)
	}
}

// An attempt's seq is named in digits only, as the job's attempts show it:
// "+1" is a 400 Bad attempt number, not attempt 1.
func TestResolveSeqTakesPlainDigitsOnly(t *testing.T) {
	b := setup(t, options{})
	id := b.create(t, acmeKey, "digits-seq", triageBody("one"), "Prefer", "wait=10").job()
	for _, seq := range []string{"+1", "-1", "1.0"} {
		r := b.do(t, "POST", "/v1/jobs/"+id+"/attempts/"+seq+"/resolve", acmeKey, `{"outcome":"failed"}`)
		if r.status != http.StatusBadRequest || r.body["title"] != "Bad attempt number" {
			t.Errorf("resolve of attempt %q: %d %s; want 400 Bad attempt number", seq, r.status, r.raw)
		}
	}
}

// RFC 3339's note to §5.6 lets a time's "T" be a space (2026-01-02
// 15:04:05Z, as SQL and many formatters write it; sent as %20, or as a '+'
// that query decoding reads as a space): such bounds list as their "T" forms
// do, also with an offset whose '+' was sent unencoded.
func TestListTakesSpaceSeparatedTimes(t *testing.T) {
	b := setup(t, options{})
	b.create(t, acmeKey, "space-1", triageBody("one"), "Prefer", "wait=10")
	for _, q := range []string{
		"?created_after=2000-01-02%2015:04:05Z&created_before=2999-01-02%2015:04:05.5Z",
		"?created_after=2000-01-02+15:04:05Z&created_before=2999-01-02+15:04:05z",
		"?created_after=2000-01-02+15:04:05+01:00&created_before=2999-01-02%2015:04:05%2B01:00",
	} {
		r := b.do(t, "GET", "/v1/jobs"+q, acmeKey, "")
		if r.status != http.StatusOK {
			t.Errorf("GET /v1/jobs%s: %d %s, want 200", q, r.status, r.raw)
			continue
		}
		if p := b.list(t, acmeKey, q); len(p.Data) != 1 {
			t.Errorf("GET /v1/jobs%s lists %d jobs, want 1", q, len(p.Data))
		}
	}
	if p := b.list(t, acmeKey, "?created_before=2000-01-02+15:04:05+01:00"); len(p.Data) != 0 {
		t.Errorf("a space-separated bound before the job lists %d jobs, want 0", len(p.Data))
	}
}
