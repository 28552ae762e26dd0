package api_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/routerhq/router/internal/providers"
)

// docs/api.md: an option an endpoint does not have is never silently
// ignored. GET /v1/jobs/{id} and GET /v1/jobs/{id}/events read no query
// parameter, and answered one as if it were not there: ?wait=30 returned the
// running job at once, as though the router had waited (the wait is the
// Prefer: wait header), and …/events?limit=1 every event. They are refused
// (400 invalid-request naming the parameter, and what the endpoint reads
// instead), as the POST endpoints refuse theirs; another owner's job is
// still the 404.
func TestJobReadsRefuseQuery(t *testing.T) {
	b := setup(t, options{respond: func(int, *providers.Request) providers.Step {
		return providers.Step{Hang: true} // the job stays running
	}})
	job := b.create(t, acmeKey, "query-read", triageBody("hangme")).job()

	for _, tc := range []struct{ path, param, takes string }{
		{"/v1/jobs/" + job + "?wait=30", `"wait"`, "Prefer: wait="},
		{"/v1/jobs/" + job + "/events?limit=1", `"limit"`, "no options"},
	} {
		got := b.do(t, "GET", tc.path, acmeKey, "")
		d, _ := got.body["detail"].(string)
		ty, _ := got.body["type"].(string)
		if got.status != http.StatusBadRequest || !strings.HasSuffix(ty, "invalid-request") ||
			!strings.Contains(d, tc.param) || !strings.Contains(d, tc.takes) || got.body["job_id"] != job {
			t.Errorf("GET %s: %d %s; want 400 invalid-request naming %s and the job, saying what it takes (%q)",
				tc.path, got.status, got.raw, tc.param, tc.takes)
		}
		if other := b.do(t, "GET", tc.path, globexKey, ""); other.status != http.StatusNotFound {
			t.Errorf("another owner's GET %s: %d, want 404: %s", tc.path, other.status, other.raw)
		}
	}
	// A bare "?" names no parameter: the job, and its events, as without it.
	for _, path := range []string{"/v1/jobs/" + job + "?", "/v1/jobs/" + job + "/events?"} {
		if got := b.do(t, "GET", path, acmeKey, ""); got.status != http.StatusOK {
			t.Errorf("GET %s: %d, want 200: %s", path, got.status, got.raw)
		}
	}
}
