package race

import (
	"encoding/json"

	"github.com/routerhq/router/internal/store"
)

// Preflight decides, before a job exists, whether any provider of its route
// could take it now (context window, breakers, conformance). The API uses it to
// answer 503 with the routing, storing nothing, when none could. job needs only
// Operation, PromptVersion, Route and Input.
func (r *Runner) Preflight(job *store.Job) (routing json.RawMessage, ok bool) {
	route, found := r.cfg.Routes[job.Route]
	if !found {
		return nil, true // the runner will report it; the API checks routes itself
	}
	sp, err := r.specFor(job, route)
	if err != nil {
		return nil, true
	}
	decisions := r.decide(route, sp)
	for _, d := range decisions {
		if d.Eligible {
			return nil, true
		}
	}
	b, _ := json.Marshal(decisions)
	return b, false
}
