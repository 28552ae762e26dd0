package race

import (
	"encoding/json"
	"strconv"
	"strings"
	"time"

	"github.com/routerhq/router/internal/chat"
	"github.com/routerhq/router/internal/jsonenc"
	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/store"
)

// AppendJob appends the job resource as the router shows it to whoever
// reads a job — GET /v1/jobs (internal/api), the body of its job.failed
// webhook event (internal/webhook) and `router jobs get` (cmd/router):
// store.Job's JSON (a chat job's input in the object form: chat.ShownInput),
// and for a failed job a last member "next_step"
// (NextStep) saying that the job has ended and how to run it again. The
// job's "error" is written as stored: the same in every answer and webhook
// body that carries it. Jobs in other states are written exactly as stored.
func AppendJob(b []byte, job *store.Job) []byte { return AppendJobStep(b, job, NextStep(job)) }

// AppendJobStep is AppendJob with step as the failed job's next_step (""
// for none): internal/api gives a next_step of its own to a job no replica
// can run again.
func AppendJobStep(b []byte, job *store.Job, step string) []byte {
	if job != nil {
		if _, isChat := chat.Route(job.Operation); isChat {
			// A chat job's input keeps the caller's schemas and tools as
			// their text beside them (chat.Input.StoredJSON): shown as
			// objects in the caller's order, without that text.
			if shown, changed := chat.ShownInput(job.Input); changed {
				cp := *job
				cp.Input = shown
				job = &cp
			}
		}
	}
	b = job.AppendJSON(b)
	if step == "" {
		return b
	}
	b = append(b[:len(b)-1], `,"next_step":`...) // the object's closing brace, written again below
	b = jsonenc.AppendString(b, step)
	return append(b, '}')
}

// NextStep says what the caller of a failed job can do, "" for a job in any
// other state (and for nil). A failed job is not tried again by itself: POST
// /v1/jobs/{id}/retry starts a new round under the same id (and takes its
// key back from expiry: a resend with the key then attaches to it, as on the
// chat path), or the request is sent as a new job under a new key. When the
// race's last word was the provider refusing the request itself (the
// caller's fault: a bad request, a content policy refusal, a context window
// or a per-minute limit the request alone exceeds), a retry would send the
// same request to be refused again: the caller is told to correct it
// instead, as a failed chat call is. When the conformance gate kept targets
// of the route out of the race (GatedTargets: the default gate, on a
// deployment whose fallbacks nobody has run the suite on), a retry would be
// gated the same way: the caller is told which targets, why, and that the
// retry helps only once they pass (GatedNote) — unless the gate only could
// not read its results, which clears by itself. When the job's key expired
// and a newer job took it over (store.Job.KeyTaken), neither a retry nor a
// resend with the key reaches this job any more: the caller is told to send
// the request as a new job under a new key (keyTakenAdvice).
func NextStep(job *store.Job) string {
	if job == nil || job.State != store.JobFailed {
		return ""
	}
	keyless := keylessChat(job)
	ended := "the job has failed and the router will not try it again by itself"
	if job.KeyTaken {
		return ended + keyTakenAdvice(job, keyless)
	}
	if callerFaultLastWord(job) {
		ended += "; the provider refused the request itself, so a retry (POST /v1/jobs/" + job.ID + "/retry) would send it unchanged to be refused again"
		if keyless {
			return ended + ": correct the request and send it again"
		}
		return ended + ": correct the request and send it with a new Idempotency-Key (this key stays bound to the failed job " + job.ID + ")"
	}
	then := ": "
	if note, after := GatedNote(job); note != "" {
		ended += "; " + note
		then = after
	}
	if keyless {
		return ended + then + "start a new round with POST /v1/jobs/" + job.ID + "/retry (then read it with GET /v1/jobs/" + job.ID +
			"), or send the request again as a new job"
	}
	return ended + then + "start a new round with POST /v1/jobs/" + job.ID + "/retry (then resend with the same Idempotency-Key to attach to it, " +
		"or read it with GET /v1/jobs/" + job.ID + "), or send the request with a new Idempotency-Key"
}

// keyTakenAdvice is next_step's advice for a failed job whose key expired
// and was taken over by a newer job (store.Job.KeyTaken): a retry is refused
// (409 idempotency-key-rebound) and a resend with the key reaches the newer
// job, so the only way to run the request again is as a new job under a new
// key — corrected first when the provider refused it itself.
func keyTakenAdvice(job *store.Job, keyless bool) string {
	expired := ""
	if job.KeyExpiresAt != nil {
		expired = " at " + job.KeyExpiresAt.UTC().Format(time.RFC3339)
	}
	again := "send the request again"
	if callerFaultLastWord(job) {
		again = "correct the request (the provider refused it itself) and send it again"
	}
	if keyless {
		return "; its key expired" + expired + " and now holds another request's job, so this job cannot be retried: " +
			again + " as a new job"
	}
	return "; its Idempotency-Key " + strconv.Quote(job.IdempotencyKey) + " expired" + expired +
		" and now holds another request's job, so this job cannot be retried or attached to: " + again +
		" with a new Idempotency-Key"
}

// keylessChat reports a chat call that sent no Idempotency-Key: the router
// named its job's key "auto-<uuid>" (internal/api's chatCompletions), and
// nobody holds the key to resend with. Only a chat job's key is one the
// router may have made up: on POST /v1/jobs the key is always the caller's,
// whatever it looks like, and a caller who chose "auto-<uuid>" is told of it
// as of any key (a resend with it replays the failed job).
func keylessChat(job *store.Job) bool {
	if _, isChat := chat.Route(job.Operation); !isChat {
		return false
	}
	id, auto := strings.CutPrefix(job.IdempotencyKey, "auto-")
	return auto && store.IsJobID(id)
}

// GateUnread begins the reason of a conformance gate's refusal when it could
// not read its results (conformance.Gate fails closed while the database
// does not answer, or conformance_runs is locked): the refusal says nothing
// of the target's runs, and clears by itself. No other reason of the gate
// begins with these words (none begins with a name).
const GateUnread = "cannot read conformance results"

// GatedNote says what the conformance gate did to the targets of the job's
// routing it kept out of this round (GatedTargets), and then how to join it
// to the advice to start a new round: next_step's words, and a failed chat
// call's. A target refused for lack of a fresh passing `router conformance
// run` is refused again by a retry until the operator makes it pass; one
// refused because the gate could not read its results (GateUnread) may be
// used by a retry in a few seconds, so the caller is not sent to the
// operator for it. note is "" when the gate refused nothing.
func GatedNote(job *store.Job) (note, then string) {
	var refused, unread []string
	for _, g := range gatedTargets(job) {
		if strings.HasPrefix(g.reason, GateUnread) {
			unread = append(unread, g.String())
		} else {
			refused = append(refused, g.String())
		}
	}
	const gate = "the conformance gate (conformance.gate) "
	const unreadFor = "could not read its results for targets of its route ("
	const transient = "), which is temporary (the database did not answer it in time): a retry in a few seconds may use "
	switch {
	case len(refused) > 0 && len(unread) > 0:
		return gate + skipped(refused) + "; it also " + unreadFor + strings.Join(unread, "; ") + transient + "those",
			"; once the router's operator has made the skipped ones pass, "
	case len(refused) > 0:
		return gate + skipped(refused), onceTheyPass
	case len(unread) > 0:
		return gate + unreadFor + strings.Join(unread, "; ") + transient + "them", "; "
	}
	return "", ""
}

// skipped says that the gate skipped the targets refused, which a retry now
// would skip too.
func skipped(refused []string) string {
	return "skipped targets of its route that have no fresh passing `router conformance run` (" + strings.Join(refused, "; ") +
		"), so a retry now would be gated the same way"
}

// onceTheyPass joins GatedNote, when it names only targets that must pass
// first, to the advice to start a new round.
const onceTheyPass = "; once the router's operator has made them pass, "

// GatedTargets is each target of the job's routing that the conformance gate
// refused and that this round never tried, as "<target>: <the gate's
// reason>" (the reason says which run admits it); none when the gate refused
// nothing. A gate's refusal is a decision whose Cause is
// CauseConformanceGate. This router gives every ineligible decision a cause:
// one without was written by a router from before Decision.Cause (a job
// stored before the upgrade), and only such a decision is read as that router
// read it, a gate's refusal being the one reason of routing that names
// conformance (conformance.Gate's reasons all do; a context window's, a
// breaker's or an unconfigured target's do not) — which a target whose name
// contains "conformance" would fool, as it cannot once decisions have causes.
func GatedTargets(job *store.Job) []string {
	var out []string
	for _, g := range gatedTargets(job) {
		out = append(out, g.String())
	}
	return out
}

// gated is a target the conformance gate kept out of a job's round, and why.
type gated struct{ target, reason string }

func (g gated) String() string { return g.target + ": " + g.reason }

// gatedTargets is GatedTargets before it is written.
func gatedTargets(job *store.Job) []gated {
	if job == nil || len(job.Routing) == 0 {
		return nil
	}
	var decisions []Decision
	if json.Unmarshal(job.Routing, &decisions) != nil {
		return nil
	}
	var out []gated
	for _, d := range decisions {
		if d.Eligible || d.Event != "" || triedThisRound(job, d.Provider) {
			continue
		}
		if d.Cause == CauseConformanceGate || d.Cause == "" && strings.Contains(d.Reason, "conformance") {
			out = append(out, gated{d.Provider, d.Reason})
		}
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

// callerFaultLastWord reports a job whose attempt that ended last failed
// because the provider refused the request itself: the cases a failed chat
// call answers 400 or 413 rather than 502.
func callerFaultLastWord(job *store.Job) bool {
	last := LastEndedAttempt(job)
	if last == nil {
		return false
	}
	var e struct {
		Kind  string `json:"kind"`
		Fault string `json:"fault"`
	}
	if json.Unmarshal(last.Error, &e) != nil {
		return false
	}
	switch e.Kind {
	case string(providers.KindBadRequest), string(providers.KindContentPolicy), string(providers.KindContextLength):
		return true
	case string(providers.KindRateLimited):
		// A rate limit the request alone exceeds (providers'
		// failOverTooLarge); an ordinary one is the provider's.
		return e.Fault == string(providers.FaultCaller)
	}
	return false
}

// LastEndedAttempt is the job's attempt that ended last (the later seq of
// two that ended at the same moment); nil when none has ended.
func LastEndedAttempt(job *store.Job) *store.Attempt {
	var last *store.Attempt
	for i := range job.Attempts {
		a := &job.Attempts[i]
		if a.FinishedAt == nil {
			continue
		}
		if last == nil || a.FinishedAt.After(*last.FinishedAt) || a.FinishedAt.Equal(*last.FinishedAt) && a.Seq > last.Seq {
			last = a
		}
	}
	return last
}
