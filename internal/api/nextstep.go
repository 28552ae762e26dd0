package api

import (
	"encoding/json"
	"strings"

	"github.com/routerhq/router/internal/jsonenc"
	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/race"
	"github.com/routerhq/router/internal/store"
)

// appendJob appends the job resource as /v1/jobs answers it: store.Job's
// JSON, and for a failed job a last member "next_step" (nextStep) saying
// that the job has ended and how to run it again. The job's "error" is
// written as stored: the same in every answer and webhook body that carries
// it. Jobs in other states are written exactly as stored.
func appendJob(b []byte, job *store.Job) []byte {
	b = job.AppendJSON(b)
	step := nextStep(job)
	if step == "" {
		return b
	}
	b = append(b[:len(b)-1], `,"next_step":`...) // the object's closing brace, written again below
	b = jsonenc.AppendString(b, step)
	return append(b, '}')
}

// nextStep says what the caller of a failed job can do, "" for a job in any
// other state. A failed job is not tried again by itself: POST
// /v1/jobs/{id}/retry starts a new round under the same id (and takes its
// key back from expiry: a resend with the key then attaches to it, as on the
// chat path, chatFailure), or the request is sent as a new job under a new
// key. When the race's last word was the provider refusing the request
// itself (the caller's fault: a bad request, a content policy refusal, a
// context window or a per-minute limit the request alone exceeds), a retry
// would send the same request to be refused again: the caller is told to
// correct it instead, as chatFailure tells a chat caller. When the
// conformance gate kept targets of the route out of the race (gatedTargets:
// the default gate, on a deployment whose fallbacks nobody has run the suite
// on), a retry would be gated the same way: the caller is told which targets,
// why, and that the retry helps only once they pass.
func nextStep(job *store.Job) string {
	if job == nil || job.State != store.JobFailed {
		return ""
	}
	// A chat call that sent no Idempotency-Key: the router named the job
	// (chatCompletions), and nobody holds its key to resend with.
	keyless := strings.HasPrefix(job.IdempotencyKey, "auto-") && store.IsJobID(strings.TrimPrefix(job.IdempotencyKey, "auto-"))
	ended := "the job has failed and the router will not try it again by itself"
	if callerFaultLastWord(job) {
		ended += "; the provider refused the request itself, so a retry (POST /v1/jobs/" + job.ID + "/retry) would send it unchanged to be refused again"
		if keyless {
			return ended + ": correct the request and send it again"
		}
		return ended + ": correct the request and send it with a new Idempotency-Key (this key stays bound to the failed job " + job.ID + ")"
	}
	then := ": "
	if gated := gatedTargets(job); len(gated) > 0 {
		// A retry now is gated the same way: the round would fail as this
		// one did, without the targets the gate refused.
		ended += "; " + gatedSkipped(gated)
		then = onceTheyPass
	}
	if keyless {
		return ended + then + "start a new round with POST /v1/jobs/" + job.ID + "/retry (then read it with GET /v1/jobs/" + job.ID +
			"), or send the request again as a new job"
	}
	return ended + then + "start a new round with POST /v1/jobs/" + job.ID + "/retry (then resend with the same Idempotency-Key to attach to it, " +
		"or read it with GET /v1/jobs/" + job.ID + "), or send the request with a new Idempotency-Key"
}

// gatedSkipped says that the conformance gate skipped the targets gated
// (gatedTargets: "<target>: <the gate's reason>", which names the run that
// admits it) and that a retry now would be gated the same way: next_step's
// words, and a failed chat call's (chatFailure).
func gatedSkipped(gated []string) string {
	return "the conformance gate (conformance.gate) skipped targets of its route that have no fresh passing " +
		"`router conformance run` (" + strings.Join(gated, "; ") + "), so a retry now would be gated the same way"
}

// onceTheyPass joins gatedSkipped to the advice to start a new round.
const onceTheyPass = "; once the router's operator has made them pass, "

// callerFaultLastWord reports a job whose attempt that ended last failed
// because the provider refused the request itself: the cases chatFailure
// answers 400 or 413 rather than 502.
func callerFaultLastWord(job *store.Job) bool {
	last := lastEnded(job)
	if last == nil {
		return false
	}
	switch kind, _ := attemptFailure(*last); kind {
	case string(providers.KindBadRequest), string(providers.KindContentPolicy), string(providers.KindContextLength):
		return true
	case string(providers.KindRateLimited):
		return tooLargeForLimit(*last)
	}
	return false
}

// gatedTargets is each target of the job's routing that the conformance gate
// refused and that this round never tried, as "<target>: <the gate's
// reason>" (the reason says which run admits it); none when the gate refused
// nothing. A gate's refusal is the one reason of routing that names
// conformance (conformance.Gate's reasons all do; a context window's, a
// breaker's or an unconfigured target's do not).
func gatedTargets(job *store.Job) []string {
	if len(job.Routing) == 0 {
		return nil
	}
	var decisions []race.Decision
	if json.Unmarshal(job.Routing, &decisions) != nil {
		return nil
	}
	var out []string
	for _, d := range decisions {
		if d.Eligible || d.Event != "" || !strings.Contains(d.Reason, "conformance") || triedThisRound(job, d.Provider) {
			continue
		}
		out = append(out, d.Provider+": "+d.Reason)
	}
	return out
}

// triedThisRound reports whether the job has an attempt on provider since its
// last explicit retry.
func triedThisRound(job *store.Job, provider string) bool {
	for _, a := range job.Attempts {
		if a.Seq > job.AttemptBase && a.Provider == provider {
			return true
		}
	}
	return false
}
