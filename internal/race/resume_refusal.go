package race

import (
	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/store"
)

// refusedCaller says whether a, an attempt a resumed race counts as tried,
// failed with a refusal of the caller's request that the live race acts on
// with refuse: a bad request, or a content-policy rejection on a route that
// does not fail over on it (SPEC §6.3), each with the action stop. Such an
// attempt is one reconciliation found failed in the provider's record, or one
// that ended while another attempt of the job went unknown: either way no
// target not yet tried is started for the job any more, as the live race
// would not have started one.
func refusedCaller(a store.Attempt, route *Route) bool {
	kind, action := classOf(a)
	if action != providers.ActionStop {
		return false
	}
	return kind == providers.KindBadRequest || kind == providers.KindContentPolicy && !route.FailoverOnContentPolicy
}
