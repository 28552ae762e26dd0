package api

import (
	"strings"

	"github.com/routerhq/router/internal/jsonenc"
	"github.com/routerhq/router/internal/providers"
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
// correct it instead, as chatFailure tells a chat caller.
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
	if keyless {
		return ended + ": start a new round with POST /v1/jobs/" + job.ID + "/retry (then read it with GET /v1/jobs/" + job.ID +
			"), or send the request again as a new job"
	}
	return ended + ": start a new round with POST /v1/jobs/" + job.ID + "/retry (then resend with the same Idempotency-Key to attach to it, " +
		"or read it with GET /v1/jobs/" + job.ID + "), or send the request with a new Idempotency-Key"
}

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
