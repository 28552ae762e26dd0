package api_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/routerhq/router/internal/breaker"
	"github.com/routerhq/router/internal/providers"
)

// POST /v1/jobs/{id}/retry checks that a provider could take the job from the
// breakers' states: it takes no breaker admission (when half-open, the probe)
// only to hand it back. Every admission a retry asks for is its attempts'.
// Its check used to run a full Plan, one admission more, counted by the
// breaker as a request and an exclusion. Found by review.
func TestRetryCheckTakesNoAdmission(t *testing.T) {
	set := breaker.New(map[string]breaker.Settings{"primary": {ConsecutiveFailures: 1000, OpenFor: 30 * time.Second}}, breaker.Options{})
	t.Cleanup(set.Close)
	adm := &countingAdmission{Set: set}
	b := setup(t, options{admission: adm,
		respond: func(int, *providers.Request) providers.Step {
			return providers.Step{Status: http.StatusServiceUnavailable}
		}})
	failed := b.create(t, acmeKey, "retry-admission-1", triageBody("Down"), "Prefer", "wait=30")
	if failed.body["state"] != "failed" {
		t.Fatalf("first job: %d %s", failed.status, failed.raw)
	}
	id := failed.job()
	admits := adm.admits.Load()
	attempts := b.count(t, `SELECT count(*) FROM attempts WHERE job_id = $1`, id)
	r := b.do(t, "POST", "/v1/jobs/"+id+"/retry", acmeKey, "", "Prefer", "wait=30")
	if r.status != http.StatusOK || r.body["state"] != "failed" {
		t.Fatalf("retry: %d %s; want the retried job, failed again", r.status, r.raw)
	}
	made := b.count(t, `SELECT count(*) FROM attempts WHERE job_id = $1`, id) - attempts
	if asked := adm.admits.Load() - admits; made < 1 || asked != int64(made) {
		t.Fatalf("the retry asked the breaker for %d admissions for its %d attempts; want one per attempt, none for its check", asked, made)
	}
}
