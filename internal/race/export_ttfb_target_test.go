package race

import (
	"testing"
	"time"

	"github.com/routerhq/router/internal/store"
)

// HedgeDelayOf is the hedge delay before any clamp (targetHedgeDelay) that an
// attempt of job on target gets from its route now: the route's hedge_after,
// or the adaptive estimate the job's orchestration would use.
func (r *Runner) HedgeDelayOf(t testing.TB, job *store.Job, target string) time.Duration {
	t.Helper()
	route := r.cfg.Routes[job.Route]
	sp, err := r.specFor(job, route)
	if err != nil {
		t.Fatal(err)
	}
	o := &orchestrator{r: r, job: job, spec: sp, route: route}
	return o.targetHedgeDelay(target)
}
