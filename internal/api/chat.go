package api

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"runtime/debug"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/routerhq/router/internal/chat"
	rfcproblem "github.com/routerhq/router/internal/problem"
	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/race"
	"github.com/routerhq/router/internal/store"
)

// chatCompletions is POST /v1/chat/completions: an OpenAI-compatible drop-in
// (SPEC §4.3). The call is one job; the answer is the winning attempt's
// completion, stored on the job, so every replay is byte-identical.
func (s *Server) chatCompletions(w http.ResponseWriter, r *http.Request) {
	owner := ownerFrom(r.Context())
	if perr := refuseContentEncoding(w, r); perr != nil {
		writeOpenAIError(w, perr.Status, "invalid_request_error", "unsupported_content_encoding", "", perr.Detail)
		return
	}
	body, perr := s.readBody(w, r)
	switch {
	case perr != nil && perr.Status == http.StatusRequestEntityTooLarge:
		writeOpenAIError(w, perr.Status, "invalid_request_error", "body_too_large", "", perr.Detail)
		return
	case perr != nil: // the caller's connection broke mid-body
		writeOpenAIError(w, perr.Status, "invalid_request_error", "invalid_json", "", "the body could not be read: "+perr.Detail)
		return
	}
	if perr := checkEncoding(body); perr != nil {
		writeOpenAIError(w, http.StatusBadRequest, "invalid_request_error", "invalid_encoding", "", perr.Detail)
		return
	}
	var req chat.Request
	if err := decodeChat(body, &req); err != nil {
		detail, param := describeChatError(err)
		writeOpenAIError(w, http.StatusBadRequest, "invalid_request_error", "invalid_json", param,
			"the body is not a valid chat completion request: "+detail)
		return
	}
	if detail, param := outOfRangeNumber(body); detail != "" {
		writeOpenAIError(w, http.StatusBadRequest, "invalid_request_error", "number_out_of_range", param, detail)
		return
	}
	route, passModel := req.Model, ""
	if req.Model != "" && !s.Routes[req.Model] {
		alias, ok := s.Models[req.Model]
		if !ok {
			if s.replayChatUnknownRoute(w, r, owner, &req) { // a resend during a rolling update that adds the route
				return
			}
			// The caller's model, quoted clipped: it may be as long as the body.
			writeOpenAIError(w, http.StatusNotFound, "invalid_request_error", "model_not_found", "model",
				fmt.Sprintf("the model %q does not exist on this router: GET /v1/models lists the routes and models it serves", rfcproblem.Clip(req.Model)))
			return
		}
		route, passModel = alias, req.Model
	}
	in, err := req.NormalizeFor(owner)
	if err != nil {
		param := ""
		var re *chat.RequestError
		if errors.As(err, &re) {
			param = re.Param
		}
		writeOpenAIError(w, http.StatusBadRequest, "invalid_request_error", "invalid_request", param, err.Error())
		return
	}
	key, ownKey := "", false
	if len(r.Header.Values("Idempotency-Key")) > 0 || s.cfg.RequireChatKey {
		k, perr := idempotencyKey(r)
		if perr != nil {
			writeOpenAIError(w, http.StatusBadRequest, "invalid_request_error", "invalid_idempotency_key", "", perr.Detail)
			return
		}
		key, ownKey = k, true
	} else {
		// Without a key each call is its own intent. A version 7 UUID, so
		// these keys, too, enter the keys' primary key at its right edge.
		key = "auto-" + uuid.Must(uuid.NewV7()).String()
		s.warnKeylessSDKRetry(r)
	}
	in.Model = passModel
	op := chat.Operation(route)
	input, fp, err := chatIntent(in, op, route)
	if err != nil {
		s.chatInternal(w, r, "encode request", err)
		return
	}
	nj := store.NewJob{
		Owner: owner, Operation: op, IdempotencyKey: key, Fingerprint: fp, Route: route, Input: input,
		LeaseOwner: s.cfg.LeaseOwner, LeaseFor: s.cfg.Lease, Unkeyed: !ownKey,
	}
	if s.refuseKeylessWhileDraining(w, ownKey) {
		return
	}
	admitted, refused, waited, err := s.admitLive(r, &nj, ownKey)
	if err != nil {
		s.chatInternal(w, r, "count the owner's live jobs", err)
		return
	}
	if refused != nil {
		s.writeChatLiveRefused(w, owner, refused)
		return
	}
	if waited {
		if kr := s.recheckKeyAfterWait(w, r); kr != nil {
			admitted(false)
			if kr.status != 0 {
				openAIAuthFail(w, r, kr.status, kr.title, kr.detail)
			}
			return
		}
	}
	// A panic before the creation's outcome is known (ServeHTTP answers it
	// 500) gives the admission back; the calls below come first (done runs once).
	defer admitted(false)
	liveOnly := nj.ReplayOnly // a replay only because of max_live_jobs (admitLive)
	var routing json.RawMessage
	noEligible := func() {
		if reason, param, tooLong := tooLongForEvery(routing); tooLong {
			limit := "max_tokens"
			if req.MaxCompletionTokens != nil { // the field the caller set, which wins (chat.Normalize)
				limit = "max_completion_tokens"
			}
			if param == "max_tokens" {
				param = limit
			}
			writeOpenAIError(w, http.StatusBadRequest, "invalid_request_error", "context_length_exceeded", param,
				"the request is too long for every model of this route ("+reason+"); shorten the messages or lower "+limit+". Nothing was stored")
			return
		}
		setNoEligibleRetryAfter(w, routing, 0)
		writeOpenAIError(w, http.StatusServiceUnavailable, "server_error", "no_eligible_provider", "",
			fmt.Sprintf("no provider of route %q can take the request now (%s); nothing was stored; %s",
				route, windowReasons(routing), chatNoEligibleAdvice(routing, ownKey)))
	}
	// A request let through unplanned as a replay (a breaker half-open, its
	// key held at the look-up: heldFirst) is claimed replay-only: should the
	// key's retention pass before the claim, CreateJob creates nothing
	// (store.ErrReplayKeyReleased) — a job stored with no plan would skip the
	// breaker's admission, the half-open breaker's probe — and the request, a
	// new job now, is planned and claimed once more as one, without the
	// look-up (as createPlanned does for POST /v1/jobs).
	var (
		plan    store.JobPlan
		job     *store.Job
		created bool
	)
	for lookUp := true; ; lookUp = false {
		var ok, heldFirst bool
		var runErr error
		plan, routing, ok, heldFirst, runErr, err = s.planJob(r, &nj, lookUp)
		if runErr != nil {
			admitted(false)
			writeOpenAIError(w, http.StatusBadRequest, "invalid_request_error", "invalid_request", "", runErr.Error())
			return
		}
		if err != nil {
			admitted(false)
			s.chatInternal(w, r, "check the idempotency key", err)
			return
		}
		if !ok {
			admitted(false)
			noEligible()
			return
		}
		if s.refuseKeylessWhileDraining(w, ownKey) { // again: admission and planning may wait
			admitted(false)
			discard(plan)
			return
		}
		if !ownKey {
			// From here on a job may exist, so a resend without a key would be
			// a second job (the provider may be paid twice): tell OpenAI's SDKs,
			// which resend 408, 409, 429 and 5xx answers and send no key, not to.
			noSDKRetry(w)
		}
		if heldFirst {
			nj.ReplayOnly = true
		}
		job, created, err = s.Store.CreateJob(r.Context(), nj)
		if heldFirst && !liveOnly && errors.Is(err, store.ErrReplayKeyReleased) {
			nj.ReplayOnly = false
			continue
		}
		break
	}
	ended := admitted(err == nil && created)
	if !created {
		discard(plan)
	}
	if errors.Is(err, store.ErrKeyReused) {
		s.Counters.KeyConflict()
		noSDKRetry(w) // the same request with the same key is refused again
		detail, earlier := s.keyReusedDetail(r, owner, nj.Operation, key, nj.Fingerprint)
		if earlier != "" {
			w.Header().Set("X-Router-Job-Id", earlier)
		}
		writeOpenAIError(w, http.StatusConflict, "invalid_request_error", "idempotency_key_reused", "", detail)
		return
	}
	if errors.Is(err, store.ErrReplayKeyReleased) && !liveOnly {
		noEligible() // let past no eligible provider as a replay, whose key's retention has passed since
		return
	}
	if s.chatLiveRefusedAtClaim(w, owner, err, ownKey) {
		return
	}
	if errors.Is(err, store.ErrUnstorable) {
		writeOpenAIError(w, http.StatusBadRequest, "invalid_request_error", "unstorable_request", "", unstorableDetail(err))
		return
	}
	if err != nil {
		if _, ok := busy(err); ok {
			// A claim refused as busy stored nothing (one whose outcome is
			// not known is reported as the lost answer it is, not as busy):
			// as the other refusals before a job, an SDK may resend it.
			w.Header().Del("X-Should-Retry")
		}
		s.chatInternal(w, r, "create job", err)
		return
	}
	s.answerChatJob(w, r, &req, job, created, plan, ended, ownKey)
}

// answerChatJob answers a chat call with its job: one it created (created),
// or one its Idempotency-Key already held (a replay), waiting for it (or
// streaming it) when it has not ended. ended takes a created job off its
// owner's live count once it has ended (max_live_jobs); callerKey says
// whether the caller sent the key.
func (s *Server) answerChatJob(w http.ResponseWriter, r *http.Request, req *chat.Request, job *store.Job, created bool, plan store.JobPlan, ended func(), callerKey bool) {
	w.Header().Set("X-Router-Job-Id", job.ID)
	if created {
		s.Log.Debug("chat job created", "job_id", job.ID, "owner", job.Owner, "route", job.Route)
	} else {
		s.Counters.IdempotentReplay()
		w.Header().Set("Idempotent-Replayed", "true")
	}
	if req.Stream && !created && settled(job.State) && job.State != store.JobSucceeded {
		// A replay of a job that has already failed (or was cancelled, or
		// whose outcome is unknown): its answer is known before any byte,
		// so it goes with its own status and headers, as the plain call's
		// does, rather than as a 200 stream holding only an error event.
		s.chatFailure(w, job, callerKey)
		return
	}
	if req.Stream {
		s.streamChat(w, r, job, created, plan, ended, callerKey, req.StreamOptions != nil && req.StreamOptions.IncludeUsage)
		return
	}
	j, err := s.startAndWait(r.Context(), job, created, s.cfg.ChatWait, plan)
	if r.Context().Err() != nil {
		// The caller left (it hung up, or its own timeout passed): there is
		// no one to answer, and the router did not time out, so no 504. The
		// job goes on, and a resend with the same key attaches to it; the
		// request is counted and logged as 499 (ServeHTTP), as the stream
		// whose caller left answers nothing more.
		return
	}
	if errors.Is(err, errFinalReadBusy) {
		// The wait ended (shutdown) and the job could not be read back: it
		// exists and runs, so it is answered as still running (its id, how
		// to look it up), not as a database the router could not reach.
		s.chatFailure(w, job, callerKey)
		return
	}
	if err != nil {
		s.chatInternal(w, r, "wait for job", err)
		return
	}
	job = j
	if created && store.IsTerminal(job.State) {
		ended() // off its owner's live count before the answer (max_live_jobs)
	}
	if job.State != store.JobSucceeded {
		s.chatFailure(w, job, callerKey)
		return
	}
	if raw := job.WonResult; len(raw) > 0 && !bytes.Contains(raw, []byte(`"tool_calls":`)) && !bytes.Contains(raw, []byte(`\ufffd`)) {
		// The job this replica's win published: its result is the completion
		// as chat.Judge encoded it — the bytes decoding the stored copy and
		// encoding it again would write (PostgreSQL's jsonb reorders keys,
		// and encoding the Completion puts them back), without the decoding
		// (5% of the router's CPU per chat request). Tool calls keep the
		// provider's key order in those bytes and jsonb's in the stored copy,
		// and text that was not UTF-8 is \ufffd escaped there and U+FFFD
		// itself in the stored copy: both take the stored copy, so a replay is
		// byte for byte the first answer either way.
		writeRawJSON(w, http.StatusOK, raw)
		return
	}
	c, err := chat.DecodeCompletion(job.Result)
	if err != nil {
		s.chatInternal(w, r, "read completion", err)
		return
	}
	writeJSON(w, http.StatusOK, c)
}

// streamChat answers a streaming caller: the headers (with X-Router-Job-Id)
// go at once, a keep-alive every StreamKeepAlive while the router waits for a
// valid answer (SPEC §15: an SSE comment line, or a blank line with
// StreamBlankKeepAlive), then the whole answer as chunks — or, when
// the job did not succeed, an error event in OpenAI's shape. ended takes a job
// this request created off its owner's live count (max_live_jobs) once the
// wait has seen it end, as the plain call's does.
func (s *Server) streamChat(w http.ResponseWriter, r *http.Request, job *store.Job, created bool, plan store.JobPlan, ended func(), callerKey, includeUsage bool) {
	sw := newStreamWrites(w, s.cfg.StreamWriteStall)
	sw.arm()
	writeStreamHeaders(w)
	type waited struct {
		job *store.Job
		err error
	}
	done := make(chan waited, 1)
	go func() {
		// Outside the handler's goroutine, ServeHTTP's recovery does not
		// reach a panic here, which would end the process: it is logged and
		// answered as the stream's internal error event instead.
		defer func() {
			if v := recover(); v != nil {
				s.Log.Error("panic waiting for a streamed chat job", "job_id", job.ID, "request_id", RequestID(r.Context()),
					"panic", v, "stack", string(debug.Stack()))
				done <- waited{err: errWaitPanicked}
			}
		}()
		j, err := s.startAndWait(r.Context(), job, created, s.cfg.ChatWait, plan)
		done <- waited{j, err}
	}()
	tick := time.NewTicker(s.cfg.StreamKeepAlive)
	defer tick.Stop()
	keepAlive := keepAliveComment
	if s.cfg.StreamBlankKeepAlive {
		keepAlive = keepAliveBlank
	}
	var res waited
	// The wait ends with the caller and on Drain by itself; the loop does
	// not count on it: a wait held up (by a database that does not answer)
	// holds neither a caller that left nor a shutdown beyond drainGiveUp.
	drained, giveUp := s.drain.ch, (<-chan time.Time)(nil)
	for waiting := true; waiting; {
		select {
		case res = <-done:
			waiting = false
		case <-tick.C:
			sw.arm()
			if _, err := fmt.Fprint(w, keepAlive); err != nil || sw.rc.Flush() != nil {
				return // the caller left or stopped reading: no one takes an event
			}
		case <-r.Context().Done():
			return // the caller left, counted with the 200 its headers sent
		case <-drained:
			// Shutting down: the job as it stands — the wait's answer: on
			// Drain the wait stops waiting and reads the job once more
			// (within finalReadWait), as the plain call's answer is. Taken
			// at once, the job as this request found it told a caller
			// whose job had just succeeded (its wait reading it back) that
			// it was still running. Only a wait that has not answered by
			// drainGiveUp is answered with that (a 504 still_running
			// event, to resend).
			drained = nil
			t := time.NewTimer(drainGiveUp)
			defer t.Stop()
			giveUp = t.C
		case <-giveUp:
			res = waited{job: job}
			waiting = false
		}
	}
	if res.err == nil && created && store.IsTerminal(res.job.State) {
		ended() // off its owner's live count before the answer (max_live_jobs)
	}
	sw.arm()
	events := &sseErrorWriter{w: w, h: http.Header{}, ctx: r.Context()}
	switch {
	case r.Context().Err() != nil:
		// The caller left: no one reads an event now, and the request is
		// counted with the 200 its headers sent (docs/operations.md).
		return
	case errors.Is(res.err, errWaitPanicked):
		writeInternalEvent(r.Context(), w) // logged with its stack above
		return
	case errors.Is(res.err, errFinalReadBusy):
		s.chatFailure(events, job, callerKey) // as the plain call's (above)
		return
	case res.err != nil:
		s.chatInternal(events, r, "wait for job", res.err)
		return
	case res.job.State != store.JobSucceeded:
		s.chatFailure(events, res.job, callerKey)
		return
	}
	c, err := chat.DecodeCompletion(res.job.Result)
	if err != nil {
		s.chatInternal(events, r, "read completion", err)
		return
	}
	_ = writeStreamBody(w, sw, c, includeUsage) // an error: the caller left or stopped reading
}

// drainGiveUp is how long a stream waits, once Drain has begun, for its
// wait's last read of the job (finalReadWait) before it is answered with the
// job as its request found it.
const drainGiveUp = finalReadWait + time.Second

// The keep-alives of a stream waiting for a valid answer (SPEC §15): an SSE
// comment line (the default), or a bare blank line (chat.keepalive: blank),
// which go-openai's stream reader, unlike the comment, does not take into the
// body of a later error event. SSE clients ignore both.
const (
	keepAliveComment = ": waiting for a valid answer\n\n"
	keepAliveBlank   = "\n"
)

// errWaitPanicked is the wait of a streamed chat job ended by a panic.
var errWaitPanicked = errors.New("the wait for the job panicked")

// sseErrorWriter carries an error answer written after a stream's headers as
// one SSE event (`data: {"error": {...}}`), as OpenAI does mid-stream. The
// status the error would have had is not sent (the stream's 200 is): it is
// recorded for the request's metrics, access log and span (noteStreamError).
type sseErrorWriter struct {
	w   http.ResponseWriter
	h   http.Header
	ctx context.Context
}

func (e *sseErrorWriter) Header() http.Header { return e.h }
func (e *sseErrorWriter) WriteHeader(status int) {
	noteStreamError(e.ctx, status)
}
func (e *sseErrorWriter) Write(b []byte) (int, error) {
	if _, err := fmt.Fprintf(e.w, "data: %s\n\n", bytes.TrimSpace(b)); err != nil {
		return 0, err
	}
	flush(e.w)
	return len(b), nil
}

// chatFailure answers a job that did not succeed, in the OpenAI error shape,
// with the status that says what the caller can do. callerKey says whether the
// caller sent an Idempotency-Key (and so can attach again by resending).
func (s *Server) chatFailure(w http.ResponseWriter, job *store.Job, callerKey bool) {
	if job.State == store.JobUnknown || store.IsTerminal(job.State) {
		// A resend now gets the same answer (with the key), or starts a
		// second job (without): only still_running is worth an SDK's resend.
		noSDKRetry(w)
	}
	reason := "the job " + job.ID + " is " + job.State
	if job.State == store.JobFailed {
		reason = "the job " + job.ID + " failed"
	}
	if job.Error != nil {
		reason += ": " + *job.Error
	}
	lookup := " This call sent no Idempotency-Key, so resending it starts a new job: look this one up instead with GET /v1/jobs/" +
		job.ID + " (its id is also in the X-Router-Job-Id header)."
	switch job.State {
	case store.JobUnknown:
		msg := strings.TrimRight(reason, ".") + "."
		if job.Error == nil { // the job's error says it, and which attempt to resolve
			msg += " The outcome is unknown: the provider may have done the work. An operator can settle it with POST /v1/jobs/" +
				job.ID + "/attempts/{seq}/resolve (GET /v1/jobs/" + job.ID + " lists the attempts)."
		}
		if callerKey {
			msg += " Do not resend with a new Idempotency-Key; resend with the same key to attach to the job, or look it up with GET /v1/jobs/" + job.ID + "."
		} else {
			msg += lookup
		}
		writeOpenAIError(w, http.StatusGatewayTimeout, "server_error", "outcome_unknown", "", msg)
		return
	case store.JobCancelled:
		writeOpenAIError(w, http.StatusConflict, "invalid_request_error", "job_cancelled", "", reason)
		return
	case store.JobFailed:
	default:
		msg := "the job " + job.ID + " is still running after this call's wait; resend the same request with the same Idempotency-Key to attach to it"
		if !callerKey {
			msg = "the job " + job.ID + " is still running after this call's wait." + lookup + " It will have its answer there."
		}
		if s.draining() {
			if callerKey {
				// Only a resend with the key attaches; without one it is a
				// second job, and the X-Should-Retry: false it carries says so.
				w.Header().Set("Retry-After", "1")
			}
			msg = "this router replica is shutting down and the job " + job.ID + " is still running (another replica takes it over); resend the same request with the same Idempotency-Key to attach to it, or GET /v1/jobs/" + job.ID
			if !callerKey {
				msg = "this router replica is shutting down and the job " + job.ID + " is still running (another replica takes it over)." + lookup
			}
		}
		writeOpenAIError(w, http.StatusGatewayTimeout, "server_error", "still_running", "", msg)
		return
	}
	// A refusal of the request (content policy, context length) is the
	// caller's 400 only when it was the race's last word: when an attempt
	// that ended later failed for another reason (a target that took the
	// request, then returned 503), that failure is what the caller hears.
	if last := race.LastEndedAttempt(job); last != nil {
		switch kind, _ := attemptFailure(*last); kind {
		case string(providers.KindRateLimited):
			if tooLargeForLimit(*last) {
				// The request alone is over the target's per-minute limit
				// (Groq's 413, OpenAI's 429 "Request too large"): the
				// caller's to shorten, not a 502 an SDK resends unchanged. The
				// job failed: a caller's key stays bound to it, as its
				// siblings below say.
				writeOpenAIError(w, http.StatusRequestEntityTooLarge, "invalid_request_error", "request_too_large", "messages",
					strings.TrimRight(reason, ".")+keyBoundFix("Shorten the request (it alone is over the target's per-minute limit)", job.ID, callerKey))
				return
			}
		case string(providers.KindContentPolicy):
			writeOpenAIError(w, http.StatusBadRequest, "invalid_request_error", "content_policy_violation", "",
				strings.TrimRight(reason, ".")+keyBoundFix("Reword the request", job.ID, callerKey))
			return
		case string(providers.KindContextLength):
			// The same code as the refusal before anything is stored
			// (which leaves the key free): this one says the key is bound.
			writeOpenAIError(w, http.StatusBadRequest, "invalid_request_error", "context_length_exceeded", "messages",
				strings.TrimRight(reason, ".")+keyBoundFix("Shorten the request", job.ID, callerKey))
			return
		}
	}
	if refused, ok := refusedAsInvalid(job); ok {
		// SPEC says only that chat errors carry "the right HTTP status" (§4.3)
		// and that a bad request is the caller's fault (§6.2, §7). A provider's
		// bad_request is answered as OpenAI would have answered it, 400
		// invalid_request_error with the provider's message, not 502: the
		// request itself is wrong, and OpenAI's SDKs resend a 5xx unchanged.
		fix := keyBoundFix("Correct the request", job.ID, callerKey)
		// The provider's code and param, when it named them, say which
		// member is wrong as the provider would have said it to the caller.
		writeOpenAIError(w, http.StatusBadRequest, "invalid_request_error", refused.callerCode(), refused.Param,
			"the provider refused the request as invalid: "+strings.TrimRight(refused.Message, ".")+fix)
		return
	}
	if len(job.Attempts) == 0 && strings.Contains(reason, "no eligible provider") {
		elapsed := time.Duration(0)
		if job.FinishedAt != nil {
			elapsed = time.Since(*job.FinishedAt) // the routing is as old as the job's end
		}
		setNoEligibleRetryAfter(w, job.Routing, elapsed)
		if callerKey {
			// Stored and failed before any attempt (a breaker opened after
			// the plan): a resend with this key answers this failure again,
			// whatever Retry-After says, so the way on is said as for a 502.
			reason = strings.TrimRight(reason, ".") + "; this Idempotency-Key stays bound to the failed job: once a provider is eligible again " +
				"(after Retry-After, when given), start a new round with POST /v1/jobs/" + job.ID +
				"/retry (then resend with the same Idempotency-Key to attach to it), or send the request with a new Idempotency-Key"
		}
		writeOpenAIError(w, http.StatusServiceUnavailable, "server_error", "no_eligible_provider", "", reason)
		return
	}
	if deadline, ok := race.FailedByDeadline(job); ok {
		// The route's deadline stopped the race, not the providers' answers:
		// a gateway timeout, as a gateway's caller expects for a deadline, and
		// said with the setting that sets it.
		reason = strings.TrimRight(reason, ".") + "; the job was stopped by its route's deadline (routes." + job.Route + ".deadline, " + deadline +
			") before any provider's answer could win it: raise routes." + job.Route + ".deadline, or lower its targets' timeouts so that a failover fits in it"
		if callerKey {
			reason += "; then start a new round with POST /v1/jobs/" + job.ID +
				"/retry (then resend with the same Idempotency-Key to attach to it), or send the request with a new Idempotency-Key"
		}
		writeOpenAIError(w, http.StatusGatewayTimeout, "server_error", "deadline_exceeded", "", reason)
		return
	}
	then := "; "
	if note, after := gatedNote(job); note != "" {
		// Targets the conformance gate kept out of the race, which the job's
		// error need not name (a refusal at the plan is routing's, not an
		// attempt's): a retry or a resend now is gated the same way, as
		// next_step says — unless the gate only could not read its results.
		reason = strings.TrimRight(reason, ".") + "; " + note
		then = after
	}
	if callerKey {
		// A resend with the same key answers this again (the key stays bound
		// to the failed job); without a key a resend is a new job anyway.
		reason = strings.TrimRight(reason, ".") + then + "start a new round with POST /v1/jobs/" + job.ID +
			"/retry (then resend with the same Idempotency-Key to attach to it), or send the request with a new Idempotency-Key"
	}
	writeOpenAIError(w, http.StatusBadGateway, "server_error", "upstream_failed", "", reason)
}

// decodeChat decodes a chat request body: one JSON value, then nothing but
// whitespace (afterValue), whose member names say one thing to every JSON
// reader (checkChatMembers: no name that differs from a known one only in
// case, no top-level near miss of a parameter, no key twice in an object).
func decodeChat(body []byte, req *chat.Request) error {
	dec := json.NewDecoder(bytes.NewReader(body))
	if err := dec.Decode(req); err != nil {
		return locateTypeError(body, err)
	}
	if rest := afterValue(body, dec); len(rest) > 0 {
		return fmt.Errorf("unexpected data after the JSON object, at offset %d; send exactly one JSON object", len(body)-len(rest))
	}
	return checkChatMembers(body)
}

// refusedAsInvalid returns the provider's refusal when the job failed because
// its last attempt to end was refused as a bad request (the caller's fault in
// the providers' taxonomy). When another provider's attempt ended later, that
// provider took the same request, so its failure is what the caller hears.
func refusedAsInvalid(job *store.Job) (providerRefusal, bool) {
	last := race.LastEndedAttempt(job)
	if last == nil {
		return providerRefusal{}, false
	}
	var e providerRefusal
	if json.Unmarshal(last.Error, &e) != nil || e.Kind != string(providers.KindBadRequest) {
		return providerRefusal{}, false
	}
	// Stored by an older router, or by hand: bounded as the adapters bound them.
	e.Code, e.Param = providers.ClipIdent(e.Code, maxProviderCode), providers.ClipIdent(e.Param, maxProviderParam)
	return e, true
}

// The most of a provider's code and param a chat answer echoes (the adapters
// store no more: providers' maxCode and maxParam).
const (
	maxProviderCode  = 100
	maxProviderParam = 128
)

// providerRefusal is what a refused attempt's recorded error says of the
// provider's refusal: its message, and the provider's code and param
// (OpenAI's error.code and error.param) when it sent them.
type providerRefusal struct {
	Kind    string `json:"kind"`
	Message string `json:"message"`
	Code    string `json:"code"`
	Param   string `json:"param"`
}

// callerCode is the code a chat caller is answered with for the refusal: the
// provider's own (invalid_value, string_above_max_length, unsupported_parameter),
// or invalid_request when it sent none — when the recorded code is only the
// error's type (a provider that sent "code": null), or an HTTP status
// (vLLM's "code": 400), which say nothing the answer's type and status do not.
func (r providerRefusal) callerCode() string {
	c := r.Code
	if c == "" || strings.HasSuffix(c, "_error") || strings.HasSuffix(c, "Error") || allDigits(c) {
		return "invalid_request"
	}
	return c
}

// allDigits reports whether s is a number written in decimal digits only.
func allDigits(s string) bool {
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return s != ""
}

// attemptFailure reads the kind and message of an attempt's recorded error
// ("" for none, or for an error that is not the router's JSON).
// tooLargeForLimit reports an attempt that failed as a rate limit the request
// alone exceeds: kind rate_limited, the caller's fault (providers'
// failOverTooLarge); an ordinary rate limit is the provider's.
func tooLargeForLimit(a store.Attempt) bool {
	var e struct {
		Fault string `json:"fault"`
	}
	return json.Unmarshal(a.Error, &e) == nil && e.Fault == string(providers.FaultCaller)
}

func attemptFailure(a store.Attempt) (kind, message string) {
	var e struct {
		Kind    string `json:"kind"`
		Message string `json:"message"`
	}
	if json.Unmarshal(a.Error, &e) != nil {
		return "", ""
	}
	return e.Kind, e.Message
}

func (s *Server) chatInternal(w http.ResponseWriter, r *http.Request, what string, err error) {
	if s.callerLeft(r, what, err) {
		return
	}
	if why, ok := busy(err); ok {
		s.reqLog(r).Warn(what+": a row another transaction holds was not released in time", "err", err)
		w.Header().Set("Retry-After", "1")
		writeOpenAIError(w, http.StatusServiceUnavailable, "server_error", "busy", "", why+"; nothing was stored"+chatResend)
		return
	}
	s.reqLog(r).Error(what+" failed", "err", err)
	status, code, could := http.StatusInternalServerError, "internal", "the router could not "+what
	if store.Unavailable(err) {
		// An outage, as the API key's check reports one (503 unavailable).
		status, code, could = http.StatusServiceUnavailable, "unavailable", "the router could not reach its database to "+what
		w.Header().Set("Retry-After", "1")
	}
	writeOpenAIError(w, status, "server_error", code, "", could+chatResend)
}

// chatResend tells a chat caller whose call failed inside the router what to do.
const chatResend = "; with an Idempotency-Key, resend the request with the same key: nothing is duplicated " +
	"(without one, a resend is a new request: GET /v1/jobs lists the jobs of your API key)"

// writeInternalEvent ends a stream whose headers are out with an internal
// error event (a panic's: the cause is in the log), and no [DONE]; ctx is the
// request's, which is counted as a 500.
func writeInternalEvent(ctx context.Context, w http.ResponseWriter) {
	writeOpenAIError(&sseErrorWriter{w: w, h: http.Header{}, ctx: ctx}, http.StatusInternalServerError,
		"server_error", "internal", "", "the router failed unexpectedly"+chatResend)
}

// isEventStream reports whether h is a stream's (text/event-stream).
func isEventStream(h http.Header) bool {
	mt, _, _ := strings.Cut(h.Get("Content-Type"), ";")
	return strings.EqualFold(strings.TrimSpace(mt), "text/event-stream")
}

// noSDKRetry tells OpenAI's SDKs (Python, Node, Go's openai-go), which resend
// 408, 409, 429 and 5xx answers on their own, twice by default, not to resend
// this one: their x-should-retry header overrides the status.
func noSDKRetry(w http.ResponseWriter) { w.Header().Set("X-Should-Retry", "false") }

// chatNoEligibleAdvice is noEligibleAdvice for a chat completion refused
// before any job was stored. A caller that sent no Idempotency-Key has none
// to send again: each of its calls is a new intent.
func chatNoEligibleAdvice(routing json.RawMessage, keyed bool) string {
	switch {
	case keyed:
		return noEligibleAdvice(routing)
	case noEligibleRetryAfter(routing, 0) > 0:
		return "send the request again after Retry-After"
	}
	return "this does not clear by itself: a request succeeds once the router's operator has made a provider eligible (for conformance, `router conformance run`)"
}

// warnKeylessSDKRetry logs a keyless chat call that its SDK marks as its own
// retry (X-Stainless-Retry-Count ≥ 1: the official OpenAI and Anthropic SDKs
// resend after a timeout or a dropped connection): without an
// Idempotency-Key it runs as a new job, a second provider call for one
// intent, which the operator can only see here. The fix is the caller's: an
// Idempotency-Key, the same on every retry (or chat.require_idempotency_key).
func (s *Server) warnKeylessSDKRetry(r *http.Request) {
	n, ok := plainDigits(strings.TrimSpace(r.Header.Get("X-Stainless-Retry-Count")))
	if !ok || n < 1 {
		return
	}
	s.reqLog(r).Warn("a chat call without an Idempotency-Key is its SDK's retry: it runs as a new job, a second provider call for one request; "+
		"the caller should send an Idempotency-Key, the same on every retry (or set chat.require_idempotency_key)", "sdk_retry", n)
}

// keyBoundFix is the sentence that ends a 400 for a request the provider
// refused in a job that failed: do (a correction) and send it again — with a
// new Idempotency-Key when the caller sent one, which stays bound to the
// failed job (a resend under it answers this failure again, or 409 for a
// corrected body).
func keyBoundFix(do, jobID string, callerKey bool) string {
	if !callerKey {
		return ". " + do + " and send it again."
	}
	return ". " + do + " and send it with a new Idempotency-Key: this key stays bound to the failed job " + jobID + "."
}
