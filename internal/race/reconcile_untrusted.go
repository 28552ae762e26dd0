package race

import (
	"fmt"
	"log/slog"

	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/store"
)

// sendsLookup reports whether a request sent to t carries the metadata its
// provider's lookup finds it by (supports_lookup: the OpenAI adapter sends
// `store: true` and the attempt's id only then): what an attempt created for
// t records (store.NewAttempt.Lookup), as reconcile tells a provider with a
// lookup.
func sendsLookup(t *Target) bool {
	if t == nil {
		return false
	}
	_, ok := providers.LookerOf(t.Provider)
	return ok
}

// untrustedWarning is the warning about an unknown attempt its provider's
// lookup has no record of, whose request was not sent to be recorded
// (warnUntrusted).
const untrustedWarning = "reconcile: the provider has no record of this unknown attempt's request, but the request was not " +
	"sent to be recorded (its target's provider did not send the lookup metadata — supports_lookup was off when it was " +
	"sent — or it was sent before migration 0035 recorded that), so no record does not prove that the provider did no " +
	"work, and sending it again could run it twice: leaving the attempt unknown (warned once; it is looked up again on " +
	"each pass, and resolved should the provider's record turn up). Resolve it by hand: ask the provider whether it " +
	"processed the request, then resolve the attempt succeeded or failed (POST /v1/jobs/{id}/attempts/{seq}/resolve " +
	"with the owner's key; failed drops whatever the provider did, and the job goes on to its next target) or cancel " +
	"the job (POST /v1/jobs/{id}/cancel); docs/operations.md"

// warnUntrusted warns, once per attempt while rec lives, that u's provider
// has no record of it but its request was not sent to be recorded
// (u.Lookup false), so reconciliation leaves it unknown; later passes log
// it at debug. A warning a pass for ever, per attempt, would bury the logs
// (as firstNoSpec's).
func (r *Runner) warnUntrusted(log *slog.Logger, u store.UnknownAttempt, rec *reconciler) {
	if !rec.firstUntrusted(u.AttemptID) {
		log.Debug("reconcile: still no record of an attempt not sent to be recorded; leaving it unknown")
		return
	}
	log.Warn(untrustedWarning, "seq", u.Seq, "resolve", fmt.Sprintf("POST /v1/jobs/%s/attempts/%d/resolve", u.JobID, u.Seq))
}

// firstUntrusted reports whether attempt id is warned about by warnUntrusted
// for the first time, and remembers it (forgotten as firstNoSpec's are:
// order). A nil reconciler warns every time.
func (rc *reconciler) firstUntrusted(id string) bool {
	return rc.firstIn(func(rc *reconciler) map[string]bool { return rc.untrusted }, id)
}
