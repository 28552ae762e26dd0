package race

import (
	"encoding/json"

	"github.com/routerhq/router/internal/store"
)

// keepRan makes the routing of a race that resumes a round (prepare: a job
// run again after a wait for its breakers, adopted, or handed over) add to
// the round's recorded routing rather than replace it. The decision each
// target of ran had is kept as recorded (ran: the targets prepare marks
// tried, their attempts sent in the round): its attempt ran under it, and
// routing must still explain it (SPEC §4.2) — a re-plan finding that
// target's breaker open since (opened, most likely, by that very attempt)
// would make it say "eligible": false beside an attempt that ran there. The
// recorded events stay, in their order. Every other target — one never
// tried, or one the race may send to again as if untried (an attempt cut
// unworked or answering by its router's stop) — gets this plan's decision:
// what it decides now, which the race acts on (a breaker's refusal it may
// wait for). The round's routing was recorded with its first attempt, so a
// round with none sent (ran empty) has nothing of its own to keep: the
// plan's stands.
func (o *orchestrator) keepRan(job *store.Job, ran map[string]store.Attempt) {
	if len(ran) == 0 || len(job.Routing) == 0 {
		return
	}
	var recorded []Decision
	if json.Unmarshal(job.Routing, &recorded) != nil || len(recorded) == 0 {
		return // nothing readable to keep: the plan's routing replaces it, as before
	}
	out := make([]Decision, 0, len(recorded)+len(o.decisions))
	placed := make(map[string]bool, len(o.decisions))
	for _, d := range recorded {
		if d.Event != "" {
			out = append(out, d)
			continue
		}
		placed[d.Provider] = true
		if _, tried := ran[d.Provider]; tried {
			out = append(out, d)
		} else if now := o.decisionOf(d.Provider); now != nil {
			out = append(out, *now)
		} // else: a target no longer on the route, never tried: nothing to explain
	}
	for _, d := range o.decisions {
		if !placed[d.Provider] {
			out = append(out, d) // a target the recorded routing did not name
		}
	}
	o.decisions = out
	o.routing = appendDecisions(nil, out)
}
