package race

import (
	"github.com/routerhq/router/internal/store"
)

// noRecordNote is the note of reconciliation's resolution of an unknown
// attempt its provider's lookup has no record of (reconcileOne): the
// provider did no work. The store matches it (store.Unworked), so the two
// are one constant.
const noRecordNote = store.NoRecordNote

// unworked reports whether a is an attempt whose outcome was unknown only
// because its router stopped — it died, or lost the database, and the lease
// expired (lease_expired), or it was stopped before any response byte came
// (KindShutdown) — and that reconciliation then resolved `failed` because the
// provider's lookup has no record of it. The provider did no work and its
// target did nothing wrong: a resumed race treats the attempt as never sent
// (like store.NotSent) and may send the request to that target again —
// above all the first attempt, committed with the job's claim, of a router
// that died before it sent the request (SPEC §6.8: started exactly once).
// Nor does it count against max_attempts (store.CreateAttempt counts as
// store.Unworked says); the blocking rule holds as for any attempt.
//
// An attempt that went unknown because its provider did not answer in time
// (a timeout) is not one of them: its lookup's "no record" proves no work was
// done, not that the target is healthy, and the race fails over from it.
func unworked(a store.Attempt) bool { return store.Unworked(a) }
