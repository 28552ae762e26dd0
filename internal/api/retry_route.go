package api

import (
	"fmt"
	"net/http"

	"github.com/routerhq/router/internal/store"
)

// retryRouteUnavailable answers a retry of a failed job whose route this
// replica does not configure (race.ErrRouteNotConfigured: a configuration
// change renamed or removed it, or a newer one added it), before anything is
// written: the job stays failed, and a retry's Idempotency-Key is not taken.
// Decided as for a missing prompt version (rolloutOver): while a replica of
// another deployment may configure the route (a rolling update), 503
// route-unavailable with Retry-After (promptUnavailableRetry), so that the
// client sends the retry again and reaches such a replica; after that, a final
// 422 route-retired, since no replica can run the job again, naming what is
// left: a new job on a configured route. (A failed job cannot be cancelled.)
func (s *Server) retryRouteUnavailable(w http.ResponseWriter, r *http.Request, job *store.Job) {
	if s.rolloutOver(r.Context(), job) {
		writeProblem(w, r, problem{Status: http.StatusUnprocessableEntity, Type: "route-retired", Title: "The job's route is no longer configured",
			Detail: fmt.Sprintf("the job was created on route %q, which this deployment no longer configures, so no replica can run it again; "+
				"the job was not retried and stays failed (a failed job cannot be cancelled either): %s. Nothing was changed", job.Route, s.routeRetiredAgain(job)),
			JobID: job.ID})
		return
	}
	writeProblem(w, r, problem{Status: http.StatusServiceUnavailable, Type: "route-unavailable", Title: "This replica does not configure the job's route",
		Detail: fmt.Sprintf("the job was created on route %q, which this replica does not configure (a rolling update may be under way); the job was not retried and is still failed: "+
			"send the retry again (with the same Idempotency-Key, if it had one) after Retry-After: a replica that configures the route (another one, or this one after a rolling update finishes) runs it. Nothing was changed",
			job.Route), JobID: job.ID, RetryAfter: promptUnavailableRetry})
}
