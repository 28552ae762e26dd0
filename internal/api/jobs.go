package api

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"slices"
	"strings"
	"time"

	rfcproblem "github.com/routerhq/router/internal/problem"
	"github.com/routerhq/router/internal/prompt"
	"github.com/routerhq/router/internal/store"
)

// createJobRequest is the body of POST /v1/jobs.
type createJobRequest struct {
	Prompt        string          `json:"prompt"`
	PromptVersion string          `json:"prompt_version"`
	Input         json.RawMessage `json:"input"`
	Route         string          `json:"route"`
}

func (s *Server) createJob(w http.ResponseWriter, r *http.Request) {
	owner := ownerFrom(r.Context())
	if perr := refuseQuery(r, "POST /v1/jobs", "its options go in the JSON body (prompt, prompt_version, input, route) "+
		"and the headers Idempotency-Key and Prefer"); perr != nil {
		writeProblem(w, r, *perr)
		return
	}
	key, perr := idempotencyKey(r)
	if perr != nil {
		writeProblem(w, r, *perr)
		return
	}
	req, perr := s.decodeJob(w, r)
	if perr != nil {
		writeProblem(w, r, *perr)
		return
	}
	nj, perr := s.checkJob(r.Context(), req, owner, key)
	if perr != nil {
		// A request this replica cannot run, whose key already holds its
		// job (created before a deploy, or by a replica that loads its
		// version), gets that job.
		replayable := perr.Status == http.StatusUnprocessableEntity || perr.Type == "prompt-unavailable"
		if !replayable || !s.replayUnparsed(w, r, owner, key, req) {
			writeProblem(w, r, *perr)
		}
		return
	}
	admitted, refused, waited, err := s.admitLive(r, &nj, true)
	if err != nil {
		s.internalError(w, r, "count the owner's live jobs", err)
		return
	}
	if refused != nil {
		s.writeLiveRefused(w, r, owner, refused)
		return
	}
	if waited {
		if kr := s.recheckKeyAfterWait(w, r); kr != nil {
			admitted(false)
			if kr.status != 0 {
				writeProblem(w, r, problem{Status: kr.status, Type: authProblemType(kr.status), Title: kr.title, Detail: kr.detail})
			}
			return
		}
	}
	// A panic before the creation's outcome is known (ServeHTTP answers it
	// 500) gives the admission back; the calls below come first (done runs once).
	defer admitted(false)
	liveOnly := nj.ReplayOnly // a replay only because of max_live_jobs (admitLive)
	s.createPlanned(w, r, req, nj, admitted, liveOnly, true)
}

// createPlanned plans nj (lookUp: looking its key up first while a breaker
// is half-open, heldBeforePlan), claims its key and answers. A request let
// through unplanned as a replay, its key held at that look-up, is claimed
// replay-only: should the key's retention pass before the claim, CreateJob
// creates nothing (store.ErrReplayKeyReleased) — a job stored with no plan
// would skip the breaker's admission, the half-open breaker's probe — and the
// request, a new job now, is planned and claimed once more as one, without
// the look-up.
func (s *Server) createPlanned(w http.ResponseWriter, r *http.Request, req *createJobRequest, nj store.NewJob,
	admitted liveDone, liveOnly, lookUp bool) {
	owner, key := nj.Owner, nj.IdempotencyKey
	plan, routing, ok, heldFirst, runErr, err := s.planJob(r, &nj, lookUp)
	if runErr != nil {
		admitted(false)
		if !s.replayUnparsed(w, r, owner, key, req) {
			writeProblem(w, r, problem{Status: http.StatusUnprocessableEntity, Type: "invalid-input", Title: "Prompt cannot be rendered from this input", Detail: runErr.Error()})
		}
		return
	}
	if err != nil {
		admitted(false)
		s.internalError(w, r, "check the idempotency key", err)
		return
	}
	noEligible := func() {
		if perr := tooLongProblem(tooLongJob{operation: nj.Operation, version: nj.PromptVersion, route: nj.Route}, routing); perr != nil {
			writeProblem(w, r, *perr)
			return
		}
		setNoEligibleRetryAfter(w, routing, 0)
		writeProblem(w, r, problem{Status: http.StatusServiceUnavailable, Type: "no-eligible-provider", Title: "No eligible provider",
			Detail: fmt.Sprintf("no provider of route %q can take this job now (see routing: breakers open, conformance missing or stale); nothing was stored; %s", nj.Route, noEligibleAdvice(routing)),
			Extra:  map[string]any{"routing": routing}})
	}
	if !ok {
		admitted(false)
		noEligible()
		return
	}
	if heldFirst {
		nj.ReplayOnly = true
	}
	job, created, err := s.Store.CreateJob(r.Context(), nj)
	if heldFirst && !liveOnly && errors.Is(err, store.ErrReplayKeyReleased) {
		nj.ReplayOnly = false
		s.createPlanned(w, r, req, nj, admitted, liveOnly, false)
		return
	}
	ended := admitted(err == nil && created)
	if !created {
		discard(plan)
	}
	if errors.Is(err, store.ErrKeyReused) {
		s.keyReusedBy(w, r, owner, nj.Operation, key, nj.Fingerprint)
		return
	}
	if errors.Is(err, store.ErrReplayKeyReleased) && !liveOnly {
		noEligible() // let past no eligible provider as a replay, whose key's retention has passed since
		return
	}
	if refused, ok := s.liveRefusedAtClaim(owner, err, true); ok {
		// Admitted as a replay, whose key's retention has passed since; or
		// refused by the database's count (store.ErrLiveLimit).
		s.writeLiveRefused(w, r, owner, refused)
		return
	}
	if errors.Is(err, store.ErrUnstorable) {
		writeProblem(w, r, unstorableProblem(err))
		return
	}
	if err != nil {
		s.internalError(w, r, "create job", err)
		return
	}
	s.answerCreated(w, r, owner, job, created, plan, ended)
}

// keyReusedBy answers a request with fingerprint fp whose key already holds
// a different request's job: 409 idempotency-key-reused, with keyReusedDetail's
// words (and the caller's earlier job, when it names one).
func (s *Server) keyReusedBy(w http.ResponseWriter, r *http.Request, owner, operation, key string, fp []byte) {
	s.Counters.KeyConflict()
	s.Log.Info("idempotency key reused with a different request", "owner", owner, "operation", operation)
	detail, earlier := s.keyReusedDetail(r, owner, operation, key, fp)
	writeProblem(w, r, problem{Status: http.StatusConflict, Type: "idempotency-key-reused", Title: "Idempotency key reused",
		Detail: detail, JobID: earlier})
}

// keyReusedDetail says why a request with fingerprint fp under key is
// refused because the key holds a different request's job, and what to do.
// A key expires once its retention after its job ended has passed, and a
// different request may then claim it: the client of the first job resending
// its request unchanged — what the usual advice asks of it — is refused too.
// So when the owner has an earlier job of this very request that held the
// key until it expired and was taken over (store.ReleasedKeyJobOf: the
// owner's own job, so naming it reveals nothing), the detail says so and
// names the job (earlier, "" otherwise); else the usual advice says that a
// key may also have expired and been reused. One read, on this rejection
// only; a failed read leaves the usual words. Both POST /v1/jobs and chat
// completions answer with it.
func (s *Server) keyReusedDetail(r *http.Request, owner, operation, key string, fp []byte) (detail, earlier string) {
	if len(fp) > 0 {
		job, err := s.Store.ReleasedKeyJobOf(r.Context(), owner, operation, key, fp)
		switch {
		case err == nil:
			return fmt.Sprintf("Idempotency-Key %q no longer holds this request's job: job %s, created from this same request to %q, "+
				"held the key until it expired at %s (its retention after the job ended had passed), and a different request then claimed the key. "+
				"Job %s is still readable at GET /v1/jobs/%s (until retention deletes it); to run this request again, send it with a new Idempotency-Key",
				key, job.JobID, operation, job.ExpiredAt.Format(time.RFC3339), job.JobID, job.JobID), job.JobID
		case !errors.Is(err, store.ErrNotFound) && r.Context().Err() == nil:
			s.reqLog(r).Warn("look up the earlier job of a reused idempotency key", "err", err)
		}
	}
	return fmt.Sprintf("Idempotency-Key %q was already used for a different request to %q; use a new key for a new intent, or resend the original request unchanged. "+
		"A key also expires once its retention after its job ended has passed, and a different request may then have claimed it: "+
		"to run a request again whose key was taken that way, send it with a new key", key, operation), ""
}

// answerJob starts a created job (with its plan) and answers with the job,
// waiting as Prefer: wait asks: 201 for a job created and ended within the
// wait, 200 for a replay of an ended job, 202 for one still going.
func (s *Server) answerJob(w http.ResponseWriter, r *http.Request, owner string, job *store.Job, created bool, plan store.JobPlan) {
	s.answerCreated(w, r, owner, job, created, plan, nil)
}

// answerCreated is answerJob for a job that max_live_jobs admitted: ended
// (when not nil) takes it off its owner's live count when the wait sees it
// end, before the answer is sent (a caller creating jobs one after another
// is not refused on the count of the job it was just answered).
func (s *Server) answerCreated(w http.ResponseWriter, r *http.Request, owner string, job *store.Job, created bool, plan store.JobPlan,
	ended func()) {
	wait, applied := s.waitFor(r)
	w.Header().Set("X-Router-Job-Id", job.ID) // also in the access log line
	if created {
		s.Log.Debug("job created", "job_id", job.ID, "owner", owner, "operation", job.Operation, "route", job.Route)
	}
	j, err := s.startAndWait(r.Context(), job, created, wait, plan)
	if r.Context().Err() != nil {
		// The caller left during its wait: nothing to answer (counted and
		// logged as 499, ServeHTTP); the job goes on.
		return
	}
	if err != nil {
		s.jobError(w, r, "wait for job", err, job.ID)
		return
	}
	job = j
	if created && ended != nil && store.IsTerminal(job.State) {
		ended()
	}
	if applied != "" {
		w.Header().Set("Preference-Applied", applied)
	}
	status := http.StatusAccepted
	switch {
	case !store.IsTerminal(job.State):
		w.Header().Set("Location", "/v1/jobs/"+job.ID)
	case created:
		status = http.StatusCreated
		w.Header().Set("Location", "/v1/jobs/"+job.ID)
	default:
		status = http.StatusOK
	}
	if !created {
		s.Counters.IdempotentReplay()
		w.Header().Set("Idempotent-Replayed", "true")
	}
	writeJob(w, status, job, s.nextStep(r.Context(), job))
}

// parseJob reads and checks a POST /v1/jobs body into the job to create, or
// the problem to answer with. Nothing is stored.
func (s *Server) parseJob(w http.ResponseWriter, r *http.Request, owner, key string) (store.NewJob, *problem) {
	req, perr := s.decodeJob(w, r)
	if perr != nil {
		return store.NewJob{}, perr
	}
	return s.checkJob(r.Context(), req, owner, key)
}

// decodeJob reads a POST /v1/jobs body.
func (s *Server) decodeJob(w http.ResponseWriter, r *http.Request) (*createJobRequest, *problem) {
	var req createJobRequest
	if perr := s.decodeBody(w, r, &req); perr != nil {
		return nil, perr
	}
	return &req, nil
}

// checkJob checks a decoded POST /v1/jobs body against the prompts and routes
// loaded here, into the job to create, or the problem to answer with (a 422
// when this replica cannot run the request, or a 503 prompt-unavailable when
// another replica may: see newJobPromptProblem and replayUnparsed).
func (s *Server) checkJob(ctx context.Context, req *createJobRequest, owner, key string) (store.NewJob, *problem) {
	if req.Prompt == "" {
		return store.NewJob{}, &problem{Status: http.StatusBadRequest, Type: "invalid-request", Title: "Missing prompt",
			Detail: `the body must name a prompt: {"prompt": "<name>", "input": {...}}`}
	}
	if len(req.Input) == 0 || req.Input[0] != '{' {
		return store.NewJob{}, &problem{Status: http.StatusBadRequest, Type: "invalid-request", Title: "Input must be an object",
			Detail: `"input" must be a JSON object holding the prompt's parameters`}
	}
	p, err := s.Prompts.Get(req.Prompt, req.PromptVersion)
	if err != nil {
		return store.NewJob{}, s.newJobPromptProblem(ctx, err)
	}
	route := req.Route
	if route == "" {
		route = p.Route
	}
	if route == "" {
		route = "default"
	}
	if !s.Routes[route] {
		return store.NewJob{}, &problem{Status: http.StatusUnprocessableEntity, Type: "unknown-route", Title: "Unknown route",
			Detail: unknownRoute(req.Route, p.Name, route, s.Routes)}
	}
	input, err := p.ParseInput(req.Input)
	if err != nil {
		pr := problem{Status: http.StatusUnprocessableEntity, Type: "invalid-input", Title: "Input does not match the prompt's input schema", Detail: err.Error()}
		var ie *prompt.InputError
		if errors.As(err, &ie) {
			pr.Violations = ie.Violations
		}
		return store.NewJob{}, &pr
	}
	fp, err := store.FingerprintValue(p.Name, req.PromptVersion, req.Route, input)
	if err != nil {
		return store.NewJob{}, &problem{Status: http.StatusBadRequest, Type: "invalid-json", Title: "Malformed input", Detail: err.Error()}
	}
	return store.NewJob{
		Owner: owner, Operation: p.Name, IdempotencyKey: key, Fingerprint: fp,
		PromptVersion: p.Version, Route: route, Input: compact(req.Input), ParsedInput: input,
		LeaseOwner: s.cfg.LeaseOwner, LeaseFor: s.cfg.Lease,
	}, nil
}

// planJob asks the executor to prepare the job's race and sets the first
// attempt to create with it. When no provider could take the job now, a job
// that already holds the key is still replayed: only a new intent is refused
// (ok=false, with routing). A key found held before planning (heldBeforePlan,
// looked up only when lookUp says so: a target's breaker is half-open) is
// replayed with no plan (ok, nil plan), taking no breaker admission, and
// heldFirst says so: a claim of such a request may create a job with no plan
// if the key's retention passes before it, so the caller claims it
// replay-only (createPlanned, chatCompletions). runErr says the job cannot
// run at all (its prompt does not render); err is the router's own failure.
func (s *Server) planJob(r *http.Request, nj *store.NewJob, lookUp bool) (plan store.JobPlan, routing json.RawMessage, ok, heldFirst bool, runErr, err error) {
	var held bool
	if lookUp {
		held, err = s.heldBeforePlan(r.Context(), nj)
	}
	if err != nil {
		return nil, nil, false, false, nil, err
	}
	if held {
		return nil, nil, true, true, nil, nil
	}
	// The owner goes with the plan: the token counts routing (and the plan's
	// run, its usage estimates) makes are cached for that owner only.
	plan, routing, ok, runErr = s.Exec.Plan(&store.Job{Owner: nj.Owner, Operation: nj.Operation, PromptVersion: nj.PromptVersion,
		Route: nj.Route, Input: nj.Input, ParsedInput: nj.ParsedInput})
	if runErr != nil {
		return nil, nil, false, false, runErr, nil
	}
	if ok {
		if plan != nil {
			nj.First = plan.First()
		}
		return plan, nil, true, false, nil, nil
	}
	if nj.Unkeyed {
		// A key made up for an unkeyed request holds no job (heldBeforePlan
		// does not look it up either): refused as it is, with no wait.
		return nil, routing, false, false, nil, nil
	}
	// Looked up again, even if found free before planning (a plain read):
	// waited for a claim of the key still committing (another replica's),
	// "nothing was stored" is not said of its job; still held, busy.
	held, err = s.Store.AwaitKeyHeld(r.Context(), nj.Owner, nj.Operation, nj.IdempotencyKey)
	if err != nil {
		return nil, nil, false, false, nil, err
	}
	// No provider can take a new job: the request may only replay. Should
	// the key's retention pass before its claim, the claim creates nothing
	// (store.ErrReplayKeyReleased), answered as no eligible provider.
	nj.ReplayOnly = nj.ReplayOnly || held
	return nil, routing, held, false, nil, nil
}

func (s *Server) getJob(w http.ResponseWriter, r *http.Request) {
	owner, id := ownerFrom(r.Context()), r.PathValue("id")
	if s.refuseJobQuery(w, r, owner, id, "GET /v1/jobs/{id}", "it reads only the header Prefer "+
		"(Prefer: wait=N waits up to N seconds for the job to settle)") {
		return
	}
	s.respondJob(w, r, owner, id, false)
}

// respondJob answers with owner's job as it is now, waiting if Prefer: wait
// asks. owned says the request has already found the job to be owner's (a
// cancellation, retry or resolution of it has just been made): a failure to
// read it then names it, as a failure before does not (another owner's job
// is a 404 like no job at all).
func (s *Server) respondJob(w http.ResponseWriter, r *http.Request, owner, id string, owned bool) {
	s.respondChanged(w, r, owner, id, owned, jobChange{})
}

// jobChange is what a request did to a job before respondChanged answers
// with the job.
type jobChange struct {
	// made says what the request changed, for a failure to read the job
	// afterwards ("the job was retried"): the change stands, and the
	// caller is told to read the job rather than send the request again
	// (changedUnread). "" for a request that changed nothing.
	made string
	// replayed marks the answer Idempotent-Replayed (a resend answered
	// with the job as it stands): only an answer that carries the job.
	replayed bool
}

// respondChanged is respondJob after a request that may have changed the job
// (change says how, and whether the answer is a replay).
func (s *Server) respondChanged(w http.ResponseWriter, r *http.Request, owner, id string, owned bool, change jobChange) {
	job, err := s.Store.GetJob(r.Context(), owner, id)
	if errors.Is(err, store.ErrNotFound) {
		writeProblem(w, r, notFoundProblem(id))
		return
	}
	if err != nil && owned && change.made != "" {
		s.changedUnread(w, r, change.made, err, id)
		return
	}
	if err != nil {
		s.jobError(w, r, "read job", err, ownedID(id, owned))
		return
	}
	if wait, applied := s.waitFor(r); wait > 0 {
		// Echoed whether or not the job had to be waited for, as on POST
		// /v1/jobs (docs/api.md): the wait applied, however long it took.
		if settled(job.State) {
			w.Header().Set("Preference-Applied", applied)
		} else if j, err := s.waitJob(r.Context(), owner, id, wait); r.Context().Err() != nil {
			return // the caller left during its wait, as in answerJob
		} else if err == nil {
			job = j
			w.Header().Set("Preference-Applied", applied)
		}
	}
	// Every response that names a job carries its id (docs/api.md), and
	// the access log line then names it too.
	w.Header().Set("X-Router-Job-Id", job.ID)
	if change.replayed {
		w.Header().Set("Idempotent-Replayed", "true")
	}
	writeJob(w, http.StatusOK, job, s.nextStep(r.Context(), job))
}

// changedUnread answers a request that changed job id (made says how) but
// whose read of the job afterwards failed with err. Sending the request again
// would not find what it found (a second retry of a job now running is a
// 409, or starts another round if it has failed again since; a second
// resolution is a 409), so the detail says that the change was made and to
// read the job. The status is jobError's for err — 503 (with Retry-After: the
// read, not the request, is what to try again) for a busy or unreachable
// database, 500 otherwise — so that the caller sees the answer did not carry
// the job.
func (s *Server) changedUnread(w http.ResponseWriter, r *http.Request, made string, err error, id string) {
	if s.callerLeft(r, "read the job after the change", err) {
		return
	}
	s.reqLog(r).Warn("the job changed but could not be read afterwards", "job_id", id, "change", made, "err", err)
	p := problem{Status: http.StatusInternalServerError, Type: "internal", Title: "Internal error", JobID: id}
	why := "an internal error"
	switch _, held := busy(err); {
	case errors.Is(err, errFinalReadBusy), held:
		p.Status, p.Type, p.Title = http.StatusServiceUnavailable, "busy", "Database busy"
		why = "every connection to its database was in use, or the database was slow to answer"
	case store.Unavailable(err):
		p.Status, p.Type, p.Title = http.StatusServiceUnavailable, "unavailable", "Database unavailable"
		why = "its database could not be reached"
	}
	if p.Status == http.StatusServiceUnavailable {
		w.Header().Set("Retry-After", "1")
	}
	p.Detail = made + ", but the router could not read the job afterwards (" + why + "): the change stands, so do not send this request again; " +
		"read the job in a moment with GET /v1/jobs/" + id
	writeProblem(w, r, p)
}

func (s *Server) cancelJob(w http.ResponseWriter, r *http.Request) {
	owner := ownerFrom(r.Context())
	id := r.PathValue("id")
	if s.refuseActionBody(w, r, owner, id, "POST /v1/jobs/{id}/cancel") {
		return
	}
	err := s.Store.CancelJob(r.Context(), owner, id)
	switch {
	case errors.Is(err, store.ErrNotFound):
		writeProblem(w, r, notFoundProblem(id))
		return
	case errors.Is(err, store.ErrJobFinished):
		writeProblem(w, r, problem{Status: http.StatusConflict, Type: "job-finished", Title: "Job cannot be cancelled",
			Detail: err.Error() + "; only pending, running or unknown jobs can be cancelled", JobID: id})
		return
	case err != nil:
		// The store waits for the job's row only when it is owner's (it
		// locks it by id and owner): a row held past its wait (busy) is
		// the caller's job. Any other failure may come before the job is
		// found, and names none.
		s.jobError(w, r, "cancel job", err, ownedID(id, store.Busy(err)))
		return
	}
	s.Exec.Cancel(id)
	s.Log.Info("job cancelled", "job_id", id, "owner", owner)
	s.respondChanged(w, r, owner, id, true, jobChange{made: "the job was cancelled"})
}

// refuseActionBody answers a cancel or retry (action) of job id sent with a
// query parameter (refuseQuery) or a body (refuseBody) it does not take, and
// reports whether it did. Only then
// is the job looked up, by id and owner, so that an action sent without a
// body reads nothing more: another owner's job, or none, or a path segment
// that is no job id, is the plain 404 job-not-found first, whatever the body
// (as a resolution is, docs/api.md), and the refusal names the job (job_id,
// X-Router-Job-Id) only once it is found to be the caller's. A lookup that
// fails (a busy or unreachable database) still refuses the body, naming no
// job: the body is wrong whatever the job, and sending the same request
// again would not help.
func (s *Server) refuseActionBody(w http.ResponseWriter, r *http.Request, owner, id, action string) bool {
	// A query parameter is refused as a body is (refuseQuery): the action
	// has no options to take from it either.
	perr := refuseQuery(r, action, "the action has no options (it reads only the headers Idempotency-Key, for a retry, and Prefer)")
	if perr == nil {
		perr = s.refuseBody(w, r, action)
	}
	if perr == nil {
		return false
	}
	s.refuseForJob(w, r, owner, id, *perr)
	return true
}

// refuseForJob answers perr, a refusal of a request about job id that did
// nothing: the plain 404 job-not-found when owner has no such job, else perr,
// naming the job (job_id, X-Router-Job-Id) once it is found to be owner's. A
// lookup that fails (a busy or unreachable database) still refuses, naming
// no job: the request is wrong whatever the job, and sending it again as it
// is would not help.
func (s *Server) refuseForJob(w http.ResponseWriter, r *http.Request, owner, id string, perr problem) {
	switch _, err := s.Store.JobState(r.Context(), owner, id); {
	case errors.Is(err, store.ErrNotFound):
		writeProblem(w, r, notFoundProblem(id))
		return
	case err != nil:
		s.reqLog(r).Debug("the job of a refused request could not be looked up; the refusal names none", "err", err)
	default:
		perr.JobID = id
	}
	writeProblem(w, r, perr)
}

// notFoundProblem is the 404 of id, a job's id or what the caller sent as
// one (quoted clipped: a path segment may be as long as the request line).
func notFoundProblem(id string) problem {
	if !store.IsJobID(id) {
		return problem{Status: http.StatusNotFound, Type: "job-not-found", Title: "Job not found",
			Detail: fmt.Sprintf("%q is not a job id: job ids are lowercase UUIDs with hyphens, exactly as the router returns them "+
				"(in the Location and X-Router-Job-Id headers and the job's \"id\"), such as 0193b0f2-6c1e-7a7b-9d2e-3c4b5a6d7e8f",
				rfcproblem.Clip(id))}
	}
	return problem{Status: http.StatusNotFound, Type: "job-not-found", Title: "Job not found",
		Detail: fmt.Sprintf("no job %q exists for this API key (an ended job is kept for idempotency.retention plus retention.jobs "+
			"after it ends, 24h + 720h by default, then deleted)", id)}
}

// internalError answers a failure of the router's own (its database's) that
// stopped the request: 503 busy or unavailable, to be retried shortly, or 500.
func (s *Server) internalError(w http.ResponseWriter, r *http.Request, what string, err error) {
	s.jobError(w, r, what, err, "")
}

// ownedID is id when owned, else "".
func ownedID(id string, owned bool) string {
	if owned {
		return id
	}
	return ""
}

// jobError is internalError for a request about job jobID, already found to
// be the caller's: the problem names it (job_id and X-Router-Job-Id, as every
// answer about an existing job does, docs/api.md). jobID "" names none, as
// internalError: never pass the id of a job not yet found to be the caller's,
// whose answer must stay the 404 of a job that does not exist.
func (s *Server) jobError(w http.ResponseWriter, r *http.Request, what string, err error, jobID string) {
	if s.callerLeft(r, what, err) {
		return
	}
	if errors.Is(err, errFinalReadBusy) {
		// The wait ended (its deadline, Drain) and the job could not be
		// read in time: the job is unaffected and is read again shortly.
		s.reqLog(r).Warn(what+": the job's last read got no answer in time", "err", err)
		again := "GET /v1/jobs/" + jobID
		if jobID == "" {
			again = "GET /v1/jobs/{id}"
		}
		w.Header().Set("Retry-After", "1")
		writeProblem(w, r, problem{Status: http.StatusServiceUnavailable, Type: "busy", Title: "Database busy",
			Detail: "the router could not read the job within " + finalReadWait.String() + " once its wait ended: " +
				"every connection to its database is in use, or the database is slow to answer; the job is unaffected: " +
				"read it again in a moment with " + again, JobID: jobID})
		return
	}
	if why, ok := busy(err); ok {
		title, logged := "Held by another transaction", "a row another transaction holds was not released in time"
		if errors.Is(err, store.ErrLiveLimitBusy) {
			title, logged = "Live-jobs check busy", "the owner's max_live_jobs lock was not released in time"
		}
		s.reqLog(r).Warn(what+": "+logged, "err", err)
		detail := why + "; nothing was stored: retry in a moment"
		if r.Header.Get("Idempotency-Key") != "" {
			detail += " with the same Idempotency-Key"
		}
		w.Header().Set("Retry-After", "1")
		writeProblem(w, r, problem{Status: http.StatusServiceUnavailable, Type: "busy", Title: title, Detail: detail, JobID: jobID})
		return
	}
	s.reqLog(r).Error(what+" failed", "err", err)
	again := "retry the request"
	if r.Header.Get("Idempotency-Key") != "" {
		again = "retry with the same Idempotency-Key: nothing is duplicated"
	}
	if store.Unavailable(err) {
		// An outage, as the API key's check reports one: the same 503, which
		// clients retry, not a 500 that reads as the router's bug.
		soon := "retry the request shortly"
		if r.Header.Get("Idempotency-Key") != "" {
			soon = "retry shortly with the same Idempotency-Key: nothing is duplicated"
		}
		w.Header().Set("Retry-After", "1")
		writeProblem(w, r, problem{Status: http.StatusServiceUnavailable, Type: "unavailable", Title: "Database unavailable",
			Detail: "the router could not reach its database to " + what + "; " + soon, JobID: jobID})
		return
	}
	writeProblem(w, r, problem{Status: http.StatusInternalServerError, Type: "internal", Title: "Internal error",
		Detail: "the router could not " + what + "; " + again, JobID: jobID})
}

// readBody reads a request's body up to the router's http.max_body_bytes: a
// longer one is 413, an unreadable one (the caller's connection broke) 400.
func (s *Server) readBody(w http.ResponseWriter, r *http.Request) ([]byte, *problem) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, s.cfg.MaxBodyBytes))
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		return nil, &problem{Status: http.StatusRequestEntityTooLarge, Type: "body-too-large", Title: "Body too large",
			Detail: fmt.Sprintf("the body is larger than the limit of %d bytes (the router's http.max_body_bytes)", s.cfg.MaxBodyBytes)}
	}
	if err != nil {
		return nil, &problem{Status: http.StatusBadRequest, Type: "invalid-json", Title: "Unreadable body", Detail: err.Error()}
	}
	return body, nil
}

// decodeBody reads a size-limited JSON body strictly into v: its top-level
// member names exactly v's, each once, and no object in it with two members
// of one name (checkMembers). It refuses one holding a number the database
// cannot store (numberProblem).
func (s *Server) decodeBody(w http.ResponseWriter, r *http.Request, v any) *problem {
	if perr := refuseContentEncoding(w, r); perr != nil {
		return perr
	}
	body, perr := s.readBody(w, r)
	if perr != nil {
		return perr
	}
	if perr := checkEncoding(body); perr != nil {
		return perr
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		detail, _ := describeJSONError(err, jsonFields(v))
		return &problem{Status: http.StatusBadRequest, Type: "invalid-json", Title: "Malformed JSON body", Detail: detail}
	}
	if rest := afterValue(body, dec); len(rest) > 0 {
		return &problem{Status: http.StatusBadRequest, Type: "invalid-json", Title: "Malformed JSON body",
			Detail: fmt.Sprintf("the body holds more than one JSON value: %q follows the end of the first at byte %d; send exactly one JSON object",
				quoteStart(rest), dec.InputOffset())}
	}
	if perr := checkMembers(body, v); perr != nil {
		return perr
	}
	return numberProblem(body)
}

// afterValue is what follows, past JSON whitespace, the value dec has just
// decoded from body: a body must hold exactly one value. (dec.More() is not
// the test: it is false before a stray '}' or ']'.)
func afterValue(body []byte, dec *json.Decoder) []byte {
	return bytes.TrimLeft(body[dec.InputOffset():], " \t\r\n")
}

// quoteStart is the start of b (its first 16 characters), for quoting in an
// error.
func quoteStart(b []byte) string {
	s, n := string(b), 0
	for i := range s {
		if n == 16 {
			return s[:i] + "…"
		}
		n++
	}
	return s
}

func compact(raw json.RawMessage) json.RawMessage {
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		return raw
	}
	return b.Bytes()
}

// unknownRoute says why a job's route is refused: the caller's own choice, or
// the prompt's default, which the router refuses at startup when it is not
// configured (so only a configuration built in code gets here). The caller's
// route is quoted clipped (rfcproblem.Clip): it is as long as they made it.
func unknownRoute(asked, promptName, route string, routes map[string]bool) string {
	names := slices.Sorted(maps.Keys(routes))
	if asked == "" {
		return fmt.Sprintf("prompt %q runs on route %q, which is not configured (configured: %s); this is the router's configuration, not the request: "+
			"ask its operator, or name one of the configured routes in \"route\"", promptName, route, strings.Join(names, ", "))
	}
	return fmt.Sprintf("route %q is not configured; name one of the configured routes (%s) or omit \"route\" for the prompt's default",
		rfcproblem.Clip(route), strings.Join(names, ", "))
}
