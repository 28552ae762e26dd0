package api_test

import (
	"net/http"
	"strings"
	"testing"
)

// A created_after or created_before earlier than the Unix epoch is refused
// with a 400 naming the parameter and the accepted range. The store reads Go's
// zero time (year 1) as no bound: created_before=0001-01-01T00:00:00Z, which
// asks for the jobs created before year 1 (none), listed every job.
func TestListRefusesBoundsBeforeTheEpoch(t *testing.T) {
	b := setup(t, options{})
	b.create(t, acmeKey, "bounds-1", triageBody("bounds"), "Prefer", "wait=10")
	for _, q := range []string{
		"created_before=0001-01-01T00:00:00Z",
		"created_before=0000-12-31T23:59:59.9999999Z",
		"created_before=0001-01-01T01:00:00%2B01:00",
		"created_after=0001-01-01T00:00:00Z",
		"created_after=0001-01-01T00:00:00.0000001Z",
		"created_before=1969-12-31T23:59:59.999999Z",
		"created_after=1900-01-01T00:00:00Z",
	} {
		name, _, _ := strings.Cut(q, "=")
		r := b.do(t, "GET", "/v1/jobs?"+q, acmeKey, "")
		detail, _ := r.body["detail"].(string)
		if r.status != http.StatusBadRequest || !strings.Contains(detail, name) || !strings.Contains(detail, "1970-01-01T00:00:00Z") {
			t.Errorf("GET /v1/jobs?%s: %d %s, want 400 naming %s and the earliest accepted bound", q, r.status, r.raw, name)
		}
	}
	// The epoch itself is accepted, and bounds all jobs as asked.
	if p := b.list(t, acmeKey, "?created_before=1970-01-01T00:00:00Z"); len(p.Data) != 0 {
		t.Errorf("created_before=1970-01-01T00:00:00Z listed %d jobs, want 0", len(p.Data))
	}
	if p := b.list(t, acmeKey, "?created_after=1970-01-01T00:00:00Z"); len(p.Data) != 1 {
		t.Errorf("created_after=1970-01-01T00:00:00Z listed %d jobs, want 1", len(p.Data))
	}
}
