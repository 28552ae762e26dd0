package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"slices"
	"strconv"
	"time"

	"github.com/routerhq/router/internal/chat"
	"github.com/routerhq/router/internal/contract"
	rfcproblem "github.com/routerhq/router/internal/problem"
	"github.com/routerhq/router/internal/prompt"
	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/race"

	"github.com/routerhq/router/internal/store"
	"github.com/routerhq/router/internal/tokens"
)

// resolveRequest is the body of POST /v1/jobs/{id}/attempts/{seq}/resolve.
type resolveRequest struct {
	Outcome string          `json:"outcome"` // failed | succeeded
	Result  json.RawMessage `json:"result"`  // required for succeeded
	Note    string          `json:"note"`
}

func (s *Server) resolveAttempt(w http.ResponseWriter, r *http.Request) {
	owner := ownerFrom(r.Context())
	id := r.PathValue("id")
	// Digits only: "+1" is no attempt's seq as the job shows it.
	n, ok := plainDigits(r.PathValue("seq"))
	if !ok || n < 1 {
		writeProblem(w, r, problem{Status: http.StatusBadRequest, Type: "invalid-request", Title: "Bad attempt number",
			Detail: "the attempt is named by its seq, a positive integer written in digits only (no sign), as shown in the job's attempts"})
		return
	}
	// A number larger than any attempt's: no attempt has it (below).
	seq := int(min(n, math.MaxInt32+1))
	// The job first: another owner's job, or none, is 404 job-not-found
	// before anything about the resolution is judged (docs/api.md), a
	// malformed body included. net/http discards (or closes the connection
	// on) a body left unread by that answer.
	job, err := s.Store.GetJob(r.Context(), owner, id)
	if errors.Is(err, store.ErrNotFound) {
		writeProblem(w, r, notFoundProblem(id))
		return
	} else if err != nil {
		s.internalError(w, r, "read job", err)
		return
	}
	// Once the job is the caller's, as the body is judged: the outcome is
	// the body's to say, not a query parameter's.
	if perr := refuseQuery(r, "POST /v1/jobs/{id}/attempts/{seq}/resolve", `its resolution goes in the JSON body ("outcome", "result", "note")`); perr != nil {
		perr.JobID = id
		writeProblem(w, r, *perr)
		return
	}
	var req resolveRequest
	if perr := s.decodeBody(w, r, &req); perr != nil {
		writeProblem(w, r, *perr)
		return
	}
	if seq > math.MaxInt32 {
		// Attempt numbers are int4 in the database: no attempt has this one.
		// Asked once the job is known to be the caller's, so that the
		// problem names only a job that exists.
		// Named as sent: seq was clamped for the lookup only.
		writeProblem(w, r, attemptNotFound(id, rfcproblem.Clip(r.PathValue("seq"))))
		return
	}
	// A row another transaction holds is waited for at most the store's
	// transition lock wait, then answered 503 busy (nothing changed), as a
	// cancellation or a retry is: it waited as long as the row was held.
	res := store.Resolution{Owner: owner, JobID: id, Seq: seq, Outcome: req.Outcome, Note: req.Note, LockWait: store.TransitionLockWait}
	if res.Note == "" {
		res.Note = "resolved by the caller"
	}
	switch req.Outcome {
	case "failed":
		if len(req.Result) > 0 && string(req.Result) != "null" {
			writeProblem(w, r, problem{Status: http.StatusBadRequest, Type: "invalid-request", Title: "Result with outcome failed",
				Detail: `a "failed" resolution takes no result; send {"outcome":"succeeded","result":{...}} to complete the job`, JobID: id})
			return
		}
	case "succeeded":
		if len(req.Result) == 0 || string(req.Result) == "null" {
			writeProblem(w, r, problem{Status: http.StatusBadRequest, Type: "invalid-request", Title: "Missing result",
				Detail: `a "succeeded" resolution needs the attempt's output as "result"; it is validated like any output`, JobID: id})
			return
		}
	default:
		writeProblem(w, r, problem{Status: http.StatusBadRequest, Type: "invalid-request", Title: "Bad outcome",
			Detail: `"outcome" must be "failed" (the provider did not do the work; the job continues) or "succeeded" (with "result")`, JobID: id})
		return
	}
	// Whether the attempt can be resolved at all comes before its result is
	// judged: an attempt that does not exist is 404 and one that is not
	// unknown (already resolved, say) is 409 (docs/api.md), whatever the
	// result — not a 422 for a result nobody will use, nor a 503 sending the
	// caller to retry on another replica for the same 409. The store checks
	// again under the job's lock (a concurrent resolution).
	if perr := unresolvable(job, seq, req.Outcome); perr != nil {
		writeProblem(w, r, *perr)
		return
	}
	if req.Outcome == "succeeded" {
		doc, usage, violations, err := s.judgeResolution(job, seq, req.Result)
		if promptMissing(err) {
			s.promptUnavailable(w, r, job, err)
			return
		}
		if err != nil {
			writeProblem(w, r, problem{Status: http.StatusUnprocessableEntity, Type: "unknown-prompt", Title: "Cannot validate the result",
				Detail: err.Error(), JobID: id})
			return
		}
		if len(violations) > 0 {
			writeProblem(w, r, problem{Status: http.StatusUnprocessableEntity, Type: "invalid-result", Title: "Result breaks the contract",
				Detail: failsChecks(violations), JobID: id, Violations: violations})
			return
		}
		res.Result, res.Usage = doc, usage
	}
	resume, err := s.Store.ResolveAttempt(r.Context(), res)
	switch {
	case errors.Is(err, store.ErrNotFound):
		writeProblem(w, r, attemptNotFound(id, strconv.Itoa(seq)))
		return
	case errors.Is(err, store.ErrStateConflict), errors.Is(err, store.ErrJobFinished):
		writeProblem(w, r, notUnknown(id, err))
		return
	case err != nil:
		s.jobError(w, r, "resolve attempt", err, id) // the job was read as owner's
		return
	}
	s.Log.Info("attempt resolved", "job_id", id, "seq", seq, "outcome", req.Outcome, "owner", owner)
	if resume {
		s.Exec.Submit(job)
	}
	s.respondChanged(w, r, owner, id, true, jobChange{made: fmt.Sprintf("attempt %d was resolved as %s", seq, req.Outcome)})
}

// unresolvable is the problem answering a resolution of attempt seq of job
// as the job was read, or nil when the attempt may be resolved with outcome:
// 404 attempt-not-found when the job has no such attempt, 409 not-unknown when
// the attempt is not unknown, or when a "succeeded" resolution finds the job
// already ended (as Store.ResolveAttempt refuses them, in the same words).
func unresolvable(job *store.Job, seq int, outcome string) *problem {
	i := slices.IndexFunc(job.Attempts, func(a store.Attempt) bool { return a.Seq == seq })
	if i < 0 {
		p := attemptNotFound(job.ID, strconv.Itoa(seq))
		return &p
	}
	if st := job.Attempts[i].State; st != store.AttemptUnknown {
		p := notUnknown(job.ID, fmt.Errorf("%w: attempt %d is %s; only unknown attempts can be resolved", store.ErrStateConflict, seq, st))
		return &p
	}
	if outcome == "succeeded" && job.State != store.JobUnknown && job.State != store.JobRunning {
		p := notUnknown(job.ID, fmt.Errorf("%w: job is %s", store.ErrJobFinished, job.State))
		return &p
	}
	return nil
}

// attemptNotFound is the 404 of a resolution naming an attempt the job does
// not have; seq is the attempt number as the caller wrote it.
func attemptNotFound(id, seq string) problem {
	return problem{Status: http.StatusNotFound, Type: "attempt-not-found", Title: "Attempt not found",
		Detail: fmt.Sprintf("job %s has no attempt %s; the attempt is named by its seq as shown in the job's attempts", id, seq), JobID: id}
}

// notUnknown is the 409 of a resolution of an attempt that is not unknown (or
// of a job that has ended); err says which.
func notUnknown(id string, err error) problem {
	return problem{Status: http.StatusConflict, Type: "not-unknown", Title: "Attempt cannot be resolved", Detail: err.Error(), JobID: id}
}

func (s *Server) retryJob(w http.ResponseWriter, r *http.Request) {
	owner := ownerFrom(r.Context())
	id := r.PathValue("id")
	if s.refuseActionBody(w, r, owner, id, "POST /v1/jobs/{id}/retry") {
		return
	}
	// An optional Idempotency-Key names the retry: a resend of it (its
	// answer was lost) is answered with the job as it stands, and starts no
	// second round (store.RetryJobKeyed). Without one every retry is a new
	// round. Checked as POST /v1/jobs checks its key.
	var key string
	if len(r.Header.Values("Idempotency-Key")) > 0 {
		k, perr := idempotencyKey(r)
		if perr != nil {
			writeProblem(w, r, *perr)
			return
		}
		key = k
	}
	if key != "" {
		// The retry this resends was made: it is not refused for the
		// owner's live limit or for no eligible provider below, which
		// judge a retry still to be made. The store decides under the
		// job's lock (a resend racing its original is caught there).
		held, err := s.Store.RetryKeyHeld(r.Context(), owner, id, key)
		switch {
		case errors.Is(err, store.ErrNotFound):
			writeProblem(w, r, notFoundProblem(id))
			return
		case err != nil:
			s.internalError(w, r, "read the job to retry", err)
			return
		case held:
			s.replayRetry(w, r, owner, id)
			return
		}
	}
	// A retried job is live again: it counts against max_live_jobs as a new
	// job does (SPEC §17), and a refusal changes nothing.
	admitted, ok, limit, err := s.limits.admitLive(r.Context(), owner)
	if err != nil {
		s.internalError(w, r, "count the owner's live jobs", err)
		return
	}
	if !ok {
		// Refused only for a retry that would make the job live again: any
		// other id is the usual 404, and a job that cannot be retried
		// anyway the usual 409, at the limit or not (reads on this rare
		// path only).
		revives, err := s.retryRevives(r, owner, id)
		switch {
		case errors.Is(err, store.ErrNotFound):
			writeProblem(w, r, notFoundProblem(id))
			return
		case err != nil:
			s.internalError(w, r, "read the job to retry", err)
			return
		case revives:
			// Not retryResent's wait for the job's row: a 429 is not
			// final (a resend once the retry it repeats has committed is
			// answered as its replay, by the plain RetryKeyHeld above), and
			// the wait writes on every refusal, which a client at its limit
			// may send often — as POST /v1/jobs's 429 reads its key plainly.
			s.setRetryAfterLive(w)
			writeProblem(w, r, problem{Status: http.StatusTooManyRequests, Type: "too-many-live-jobs", Title: "Too many live jobs",
				Detail: fmt.Sprintf("owner %s is at its limit of live jobs (limits.max_live_jobs is %d) as this router replica counts them: the jobs pending, running or unknown at its last read of the count, plus those it created since and has not seen end; the job was not retried and is still failed: retry it later, once some have finished (or cancel or resolve them)",
					owner, limit),
				JobID: id, Extra: map[string]any{"limit": "max_live_jobs"}})
			return
		}
		// RetryJob refuses it and says why (409), taking no slot. A job
		// that was live when read and failed since may be revived after
		// all: it was within the owner's limit a moment ago.
		admitted = func(bool) {}
	}
	// A panic before RetryJob's outcome is known (ServeHTTP answers it 500)
	// gives the admission back; the calls below come first (done runs once).
	defer admitted(false)
	routing, eligible, job, lacking, err := s.retryEligible(r, owner, id)
	if err != nil || !eligible {
		admitted(false)
	}
	switch {
	case errors.Is(err, store.ErrNotFound):
		writeProblem(w, r, notFoundProblem(id))
		return
	case err != nil:
		s.internalError(w, r, "read the job to retry", err)
		return
	case (lacking != nil || !eligible) && s.retryResent(w, r, owner, id, key):
		return // the retry it resends was made after all, or may be
	case errors.Is(lacking, race.ErrRouteNotConfigured):
		s.retryRouteUnavailable(w, r, job)
		return
	case lacking != nil:
		s.retryPromptUnavailable(w, r, job, lacking)
		return
	case !eligible:
		_, isChat := chat.Route(job.Operation)
		if perr := tooLongProblem(tooLongJob{operation: job.Operation, version: job.PromptVersion, route: job.Route, retryOf: job.ID, chat: isChat}, routing); perr != nil {
			writeProblem(w, r, *perr)
			return
		}
		setNoEligibleRetryAfter(w, routing, 0)
		writeProblem(w, r, problem{Status: http.StatusServiceUnavailable, Type: "no-eligible-provider", Title: "No eligible provider",
			Detail: fmt.Sprintf("no provider of route %q can take this job now (%s); the job was not retried and is still failed; %s",
				job.Route, windowReasons(routing), retryNoEligibleAdvice(routing)),
			JobID: id, Extra: map[string]any{"routing": routing}})
		return
	}
	replayed, err := s.Store.RetryJobKeyed(r.Context(), owner, id, key, s.limits.of(owner).lim.MaxLiveJobs)
	admitted(err == nil && !replayed)
	if refused, ok := s.liveRefusedAtClaim(owner, err, true); ok && refused.inDB {
		// The database counted the owner's live jobs on every replica: at
		// its limit, the job was not retried and is still failed.
		s.setRetryAfterLive(w)
		writeProblem(w, r, problem{Status: http.StatusTooManyRequests, Type: "too-many-live-jobs", Title: "Too many live jobs",
			Detail: fmt.Sprintf("owner %s is at its limit of live jobs (limits.max_live_jobs is %d), counted in the database across every router replica; "+
				"the job was not retried and is still failed: retry it later, once some have finished (or cancel or resolve them)", owner, refused.limit),
			JobID: id, Extra: map[string]any{"limit": "max_live_jobs"}})
		return
	}
	switch {
	case errors.Is(err, store.ErrNotFound):
		writeProblem(w, r, notFoundProblem(id))
		return
	case errors.Is(err, store.ErrAttemptBlocked):
		writeProblem(w, r, problem{Status: http.StatusConflict, Type: "attempt-blocked", Title: "An attempt is starting or unknown",
			Detail: err.Error(), JobID: id})
		return
	case errors.Is(err, store.ErrKeyRebound):
		writeProblem(w, r, problem{Status: http.StatusConflict, Type: "idempotency-key-rebound", Title: "Idempotency key now belongs to a newer job",
			Detail: err.Error(), JobID: id})
		return
	case errors.Is(err, store.ErrStateConflict):
		// The store's error already says only a failed job can be retried.
		writeProblem(w, r, problem{Status: http.StatusConflict, Type: "not-retryable", Title: "Job cannot be retried",
			Detail: err.Error(), JobID: id})
		return
	case errors.Is(err, store.ErrJobFinished):
		writeProblem(w, r, problem{Status: http.StatusConflict, Type: "not-retryable", Title: "Job cannot be retried",
			Detail: err.Error() + "; only a failed job can be retried", JobID: id})
		return
	case err != nil:
		s.jobError(w, r, "retry job", err, id) // retryEligible read the job as owner's
		return
	}
	if replayed {
		// A concurrent resend with this key retried the job first.
		s.replayRetry(w, r, owner, id)
		return
	}
	s.Log.Info("job retried", "job_id", id, "owner", owner)
	s.Exec.Submit(&store.Job{ID: id})
	s.respondChanged(w, r, owner, id, true, jobChange{made: "the job was retried: a new round started"})
}

// retryResent answers a keyed retry (key; "" for none) of owner's job id
// that is about to be refused before RetryJobKeyed with a final answer saying
// the job was not retried (422 input-too-long, prompt-retired or
// route-retired, 503 no-eligible-provider, prompt-unavailable or
// route-unavailable, which say nothing was done),
// and reports whether it did. The checks before it read plainly: the retry
// this resends may be committing on another replica (its key on the job's
// row, not yet visible), and the refusal would tell the caller — finally,
// for a 422 — that nothing was done, for the round that starts a moment
// later. (The 429 of max_live_jobs is not final and does not wait: a resend
// replays the retry once it is visible to RetryKeyHeld's plain read.)
// So the job's latest retry key is read again once no transaction is writing
// the job's row (store.AwaitRetryKeyHeld, a bounded wait): this key is the
// replay (200, Idempotent-Replayed); the row still held past the wait is 503
// busy with Retry-After (resend it), never the refusal; another key, or
// none, lets the refusal stand. A retry without a key is no resend: it is
// refused at once.
func (s *Server) retryResent(w http.ResponseWriter, r *http.Request, owner, id, key string) bool {
	if key == "" {
		return false
	}
	held, err := s.Store.AwaitRetryKeyHeld(r.Context(), owner, id, key)
	switch {
	case errors.Is(err, store.ErrNotFound):
		writeProblem(w, r, notFoundProblem(id))
	case err != nil:
		s.jobError(w, r, "read the job's latest retry key", err, id) // read as owner's before
	case held:
		s.replayRetry(w, r, owner, id)
	default:
		return false
	}
	return true
}

// replayRetry answers a retry whose Idempotency-Key is that of the job's
// latest retry: nothing was started, and the job is answered as it stands
// (after Prefer: wait, as a retry's answer), marked Idempotent-Replayed as a
// replay of POST /v1/jobs is — only when the answer carries the job: a
// failure to read it is a problem that says the retry was made, without the
// header.
func (s *Server) replayRetry(w http.ResponseWriter, r *http.Request, owner, id string) {
	s.Log.Info("job retry replayed", "job_id", id, "owner", owner)
	s.Counters.IdempotentReplay()
	s.respondChanged(w, r, owner, id, true, jobChange{replayed: true,
		made: "the job was already retried by an earlier request with this Idempotency-Key (this resend started nothing)"})
}

// retryRevives says whether owner's job id would be made live again by a
// retry, as far as a read before RetryJob can tell: the job is failed and
// still holds its idempotency key. A job that is not failed, or whose key a
// newer job has claimed (live), cannot be retried (RetryJob says why). A key
// no job holds live any more is taken to be the job's own, expired: RetryJob
// would take it back (a newer job that claimed it and ended too, its own key
// expired since, is not told apart here).
func (s *Server) retryRevives(r *http.Request, owner, id string) (bool, error) {
	job, err := s.Store.GetJob(r.Context(), owner, id)
	if err != nil {
		return false, err
	}
	if job.State != store.JobFailed {
		return false, nil
	}
	holder, err := s.Store.JobHoldingKey(r.Context(), owner, job.Operation, job.IdempotencyKey, job.Fingerprint())
	switch {
	case errors.Is(err, store.ErrKeyReused):
		return false, nil // another request's job holds the key
	case errors.Is(err, store.ErrNotFound):
		return true, nil
	case err != nil:
		return false, err
	}
	return holder.ID == job.ID, nil
}

// eligibility is the optional capability of an Executor (the race's Runner)
// that judges, as Plan does, whether any provider of a job's route could take
// it now, from the breakers' states: it takes no breaker admission.
type eligibility interface {
	Eligible(job *store.Job) (routing json.RawMessage, ok bool, err error)
}

// retryEligible checks, before a failed job is retried, that a provider of
// its route could take it now (the executor's Eligible, or its Plan, as POST
// /v1/jobs checks a new job, without taking a breaker's admission — a probe,
// when half-open — only to hand it back): when none could (breakers open,
// conformance missing or stale), eligible is false and routing explains each
// provider, and the job is left failed — retried, it would fail again at
// once with no attempt. A job that
// is not failed is eligible here: RetryJob answers why it cannot be retried.
// So is a job whose prompt no longer renders: its run says so. A job whose
// route this replica does not configure (race.ErrRouteNotConfigured; a chat
// job's route is its model), or a prompt job whose prompt version this replica
// does not load (a rolling update), is not: lacking says which, and the retry
// is refused before anything is written (retryRouteUnavailable,
// retryPromptUnavailable), rather than start a round this replica would hand
// over to a replica that has the route and version, or that fails once none
// took it.
func (s *Server) retryEligible(r *http.Request, owner, id string) (routing json.RawMessage, eligible bool, job *store.Job, lacking, err error) {
	job, err = s.Store.GetJob(r.Context(), owner, id)
	if err != nil {
		return nil, false, nil, nil, err
	}
	if job.State != store.JobFailed {
		return nil, true, job, nil, nil
	}
	// With its owner: routing's token counts are cached for that owner only.
	check := &store.Job{Owner: job.Owner, Operation: job.Operation, PromptVersion: job.PromptVersion, Route: job.Route, Input: job.Input}
	var ok bool
	var runErr error
	if e, can := s.Exec.(eligibility); can {
		routing, ok, runErr = e.Eligible(check)
	} else {
		var plan store.JobPlan
		plan, routing, ok, runErr = s.Exec.Plan(check)
		discard(plan) // the retried job starts without one (Submit): its admission goes back
	}
	_, isChat := chat.Route(job.Operation)
	missing := errors.Is(runErr, race.ErrRouteNotConfigured) || runErr != nil && !isChat && promptMissing(runErr)
	if runErr != nil && !missing || ok {
		return nil, true, job, nil, nil
	}
	if revives, err := s.retryRevives(r, owner, id); err == nil && !revives {
		// Another request's job holds its key now: no provider coming
		// back, nor a replica with its route or prompt version, would let
		// it run,
		// and RetryJob says so (409 idempotency-key-rebound), not 503
		// with a Retry-After.
		return nil, true, job, nil, nil
	}
	if missing {
		return nil, false, job, runErr, nil
	}
	return routing, false, job, nil, nil
}

// retryNoEligibleAdvice is noEligibleAdvice for POST /v1/jobs/{id}/retry (a
// job too long for every target is tooLongProblem's).
func retryNoEligibleAdvice(routing json.RawMessage) string {
	if noEligibleRetryAfter(routing, 0) > 0 {
		return "retry it after Retry-After"
	}
	return "this does not clear by itself: a retry succeeds once the router's operator has made a provider eligible (for conformance, `router conformance run`)"
}

// promptUnavailableRetry is the Retry-After of a resolution that this replica
// cannot validate: a rolling update's replicas turn over within seconds.
const promptUnavailableRetry = 5 * time.Second

// rolloutWindow is how long after this replica started a rolling update
// may still be under way, with replicas of the previous deployment running.
const rolloutWindow = 15 * time.Minute

// promptUnavailable answers a "succeeded" resolution of a job whose prompt
// version this replica does not have. A job created since this replica
// started comes from a replica of a newer deployment, which has its version;
// an older job may come from a replica of the previous deployment while a
// rolling update is under way (this replica started less than rolloutWindow
// ago). Either way another replica can validate the result: 503
// prompt-unavailable with Retry-After. Otherwise the job's version has been
// retired: no replica can validate the result any more, and retrying would go
// on for ever, so the answer is a final 422 naming what is left (a "failed"
// resolution, or a cancel). Nothing is changed either way.
func (s *Server) promptUnavailable(w http.ResponseWriter, r *http.Request, job *store.Job, err error) {
	if elsewhere, _ := s.promptElsewhere(r.Context(), job, err); !elsewhere {
		writeProblem(w, r, problem{Status: http.StatusUnprocessableEntity, Type: "prompt-retired", Title: "The job's prompt version is no longer deployed",
			Detail: fmt.Sprintf("the job was created with prompt %q version %q, which this deployment no longer loads (%v), so a result cannot be validated; resolve the attempt as \"failed\" (no validation) or cancel the job. Nothing was changed",
				job.Operation, job.PromptVersion, err), JobID: job.ID})
		return
	}
	writeProblem(w, r, problem{Status: http.StatusServiceUnavailable, Type: "prompt-unavailable", Title: "This replica cannot validate the result",
		Detail: fmt.Sprintf("the job was created with prompt %q version %q and this replica cannot load it (%v); retry: a replica running that version (another one, or this one after a rolling update finishes) validates the result. Nothing was changed; a \"failed\" resolution needs no validation",
			job.Operation, job.PromptVersion, err), JobID: job.ID, RetryAfter: promptUnavailableRetry})
}

// rolloutOver says whether what job needs and this replica lacks — its
// prompt version (promptElsewhere), its route (retryRouteUnavailable) — has
// been retired rather than being another deployment's during a rolling
// update: the job was created before this replica started, and the replica
// has been up for longer than a rolling update may take (rolloutWindow), so
// no replica of the previous deployment is left to have it. (A job created
// since comes from a replica of a newer deployment, which has it.) With no job
// (a new job's request naming a version), the replica's uptime alone decides.
func (s *Server) rolloutOver(ctx context.Context, job *store.Job) bool {
	return s.rolloutOverAt(job, func() time.Time { return s.startOnDBClock(ctx) })
}

// rolloutOverAt is rolloutOver with this replica's start on the database's
// clock given by start (startOnDBClock, read only when job needs it), so that
// an answer showing many jobs reads the clock once (nextSteps).
func (s *Server) rolloutOverAt(job *store.Job, start func() time.Time) bool {
	return s.now().Sub(s.started) >= rolloutWindow && (job == nil || job.CreatedAt.Before(start()))
}

// promptMissing says whether err is that of a prompt or prompt version this
// replica does not load (prompt.Set.Get's errors, wrapped).
func promptMissing(err error) bool {
	return errors.Is(err, prompt.ErrUnknownPrompt) || errors.Is(err, prompt.ErrUnknownVersion)
}

// dbClock is a Store that reads the database's clock (store.Store.Now).
type dbClock interface {
	Now(ctx context.Context) (time.Time, error)
}

// startOnDBClock is when this replica started, on the database's clock, to
// tell whether a job was created before it (rolloutOverAt). job.CreatedAt is
// on the database's clock and s.started on this process's, which may disagree
// by more than a rolling update lasts: the replica's start on the database's
// clock is the database's now less the replica's uptime (measured on this
// process's monotonic clock), so the comparison is made on one clock. Without
// the database's clock (a store that cannot read it, or a failed read) this
// process's start time stands in.
func (s *Server) startOnDBClock(ctx context.Context) time.Time {
	if c, ok := any(s.Store).(dbClock); ok {
		if now, err := c.Now(ctx); err == nil {
			return now.Add(-s.now().Sub(s.started))
		}
	}
	return s.started
}

// judgeResolution validates a resolution's result like any output: against the
// prompt's schema and contract, or for a chat job as a live answer is
// (judgeChatResolution: the assistant's content — a string, or the JSON object
// its response_format asks for — or, when the request offered tools, the
// assistant message with its tool calls).
// A chat job's completion carries the router's estimate of its usage
// (resolvedUsage); usage, when not nil, is that estimate (for any job), to be
// stored on the attempt so that its cost counts the answer the provider billed.
func (s *Server) judgeResolution(job *store.Job, seq int, result json.RawMessage) (doc json.RawMessage, usage any, violations []contract.Violation, err error) {
	var a store.Attempt
	if i := slices.IndexFunc(job.Attempts, func(a store.Attempt) bool { return a.Seq == seq }); i >= 0 {
		a = job.Attempts[i]
	}
	if _, ok := chat.Route(job.Operation); ok {
		return judgeChatResolution(job, &a, result)
	}
	p, err := s.Prompts.Get(job.Operation, job.PromptVersion)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("the job's prompt is not loaded, so the result cannot be validated: %w", err)
	}
	doc, violations = p.Validator().Validate(string(result))
	// The result is the answer the provider billed, as for a chat job: its
	// tokens count in the attempt's usage and cost, not the prompt's alone.
	prompt := func() []providers.Message {
		msgs, err := p.RenderParsed(job.ParsedInput, job.Input)
		if err != nil {
			return nil // the prompt cannot be counted: the result's tokens alone
		}
		return tokens.Counted(msgs, p.ProviderResponseFormat(), p.FormatText(), nil)
	}
	if u, raised := resolvedUsage(job, &a, []string{string(result)}, prompt); raised {
		usage = u
	}
	return doc, usage, violations, nil
}

// failsChecks says how many checks a result fails and the first of them. A list
// cut at contract.MaxViolations ends with a contract.RuleTruncated entry, which
// is not a check of its own.
func failsChecks(vs []contract.Violation) string {
	if last := vs[len(vs)-1]; len(vs) > 1 && last.Rule == contract.RuleTruncated {
		return fmt.Sprintf("the result fails more than %d checks (%s); first: %s", len(vs)-1, last.Message, vs[0].String())
	}
	return fmt.Sprintf("the result fails %d check(s); first: %s", len(vs), vs[0].String())
}
