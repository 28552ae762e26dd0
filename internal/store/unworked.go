package store

import "encoding/json"

// NoRecordNote is the note of reconciliation's `failed` resolution of an
// unknown attempt its provider's lookup has no record of: the provider did
// no work (race's reconcileOne writes it, Unworked reads it).
const NoRecordNote = "reconciled: the provider has no record of this request, so it did no work"

// Kinds of the errors of attempts whose outcome was unknown only because
// their router stopped: recovery's expiry of the lease of a router that died
// or lost the database (lease_expired), and a shutdown's cut before any
// response byte (race.KindShutdown).
const (
	leaseExpiredKind = "lease_expired"
	shutdownKind     = "shutdown"
)

// Unworked reports whether a is an attempt whose outcome was unknown only
// because its router stopped — it died, or lost the database, and the lease
// expired (lease_expired), or it was stopped before any response byte came
// (shutdown) — and that reconciliation then resolved `failed` because the
// provider's lookup has no record of it (NoRecordNote). The provider did no
// work and its target did nothing wrong: such an attempt counts neither
// against max_attempts (CreateAttempt, with unworkedSQL) nor as its target
// tried (race's resumed race), like one never sent (NotSent) — above all the
// first attempt, committed with the job's claim, of a router that died
// before it sent the request (SPEC §6.8: started exactly once).
//
// An attempt that went unknown because its provider did not answer in time
// (a timeout) is not one of them: its lookup's "no record" proves no work was
// done, not that the target is healthy, and it counts as any failure.
func Unworked(a Attempt) bool {
	if a.State != AttemptFailed || len(a.Error) == 0 {
		return false
	}
	var e struct {
		Kind       string `json:"kind"`
		Resolution struct {
			Message string `json:"message"`
		} `json:"resolution"`
	}
	if json.Unmarshal(a.Error, &e) != nil || e.Resolution.Message != NoRecordNote {
		return false
	}
	return e.Kind == leaseExpiredKind || e.Kind == shutdownKind
}

// unworkedSQL is Unworked as a condition on a row of attempts (unqualified
// columns), for the counts that must agree with it.
const unworkedSQL = `(state = 'failed' AND coalesce(error->>'kind', '') IN ('` + leaseExpiredKind + `', '` + shutdownKind + `')
	AND coalesce(error->'resolution'->>'message', '') = '` + NoRecordNote + `')`
