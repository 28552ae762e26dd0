package api_test

import (
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/routerhq/router/internal/breaker"
	"github.com/routerhq/router/internal/providers"
)

// POST /v1/jobs/{id}/retry while every provider of the job's route is refused
// by its circuit breaker is answered as POST /v1/jobs is: 503
// no-eligible-provider, with Retry-After from the breakers and the routing,
// and the job stays failed. It used to be turned back to running and failed
// at once with no attempt. Found by review.
func TestRetryWithNoEligibleProviderIs503(t *testing.T) {
	set := breaker.New(map[string]breaker.Settings{"primary": {ConsecutiveFailures: 1, OpenFor: 30 * time.Second}}, breaker.Options{})
	defer set.Close()
	b := setup(t, options{admission: set,
		respond: func(int, *providers.Request) providers.Step {
			return providers.Step{Status: http.StatusServiceUnavailable}
		}})
	failed := b.create(t, acmeKey, "retry-breaker-1", triageBody("Down"), "Prefer", "wait=30")
	if failed.body["state"] != "failed" {
		t.Fatalf("first job: %d %s", failed.status, failed.raw)
	}
	if ok, why := set.State("primary"); ok {
		t.Fatalf("the primary's breaker admits after its failure: %s", why)
	}
	id := failed.job()
	r := b.do(t, "POST", "/v1/jobs/"+id+"/retry", acmeKey, "")
	retryAfter, _ := strconv.Atoi(r.header.Get("Retry-After"))
	detail, _ := r.body["detail"].(string)
	if r.status != http.StatusServiceUnavailable || !strings.HasSuffix(r.body["type"].(string), "no-eligible-provider") ||
		retryAfter < 1 || retryAfter > 30 || r.body["routing"] == nil || !strings.Contains(detail, "still failed") {
		t.Fatalf("retry with the only provider's breaker open: %d Retry-After %q %s; want 503 no-eligible-provider with Retry-After and routing",
			r.status, r.header.Get("Retry-After"), r.raw)
	}
	if n := b.count(t, `SELECT count(*) FROM jobs WHERE id = $1 AND state = 'failed'`, id); n != 1 {
		t.Fatal("a refused retry changed the job")
	}
	if n := b.count(t, `SELECT count(*) FROM attempts WHERE job_id = $1`, id); n != 1 {
		t.Fatalf("a refused retry made attempts: %d", n)
	}
}
