package api

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/routerhq/router/internal/prompt"
	"github.com/routerhq/router/internal/store"
)

// promptElsewhere decides how a request that needs a prompt version this
// replica does not load (err: prompt.Set.Get's error, wrapped) is answered,
// for a job's retry or resolution (job) and for a new job's request naming
// prompt_version (POST /v1/jobs, job nil) alike. elsewhere says that another
// replica may load the version — a rolling update may be under way — so the
// answer is 503 prompt-unavailable with Retry-After (promptUnavailableRetry)
// and nothing is written; otherwise a final 422.
//
// For a job: unless its version has been retired (rolloutOver). For a new
// job: a prompt this deployment does not load at all is unknown (a final
// 422 unknown-prompt); another version than the loaded one of a loaded
// prompt, newer or older, may be the previous or the next deployment's for
// rolloutWindow after this replica started, and is unknown after that
// (rolloutOver with no job: there is no creation time to tell a newer
// deployment's version by).
//
// cause is the prompt set's own error, without what the caller wrapped it in
// ("the prompt is no longer loaded", untrue of a newer version).
func (s *Server) promptElsewhere(ctx context.Context, job *store.Job, err error) (elsewhere bool, cause error) {
	cause = err
	for u := errors.Unwrap(cause); u != nil && u != prompt.ErrUnknownPrompt && u != prompt.ErrUnknownVersion; u = errors.Unwrap(cause) {
		cause = u
	}
	if job == nil && !errors.Is(err, prompt.ErrUnknownVersion) {
		return false, cause
	}
	return !s.rolloutOver(ctx, job), cause
}

// newJobPromptProblem is the answer to a new job's request (POST /v1/jobs)
// whose prompt or prompt version this replica does not load (err, from
// prompt.Set.Get), decided by promptElsewhere: 503 prompt-unavailable with
// Retry-After while a replica of another deployment may load the version,
// else a final 422 unknown-prompt. Nothing is stored either way.
func (s *Server) newJobPromptProblem(ctx context.Context, err error) *problem {
	elsewhere, cause := s.promptElsewhere(ctx, nil, err)
	if elsewhere {
		return &problem{Status: http.StatusServiceUnavailable, Type: "prompt-unavailable", Title: "This replica does not load the prompt version",
			Detail: fmt.Sprintf("%v; this replica started less than %d minutes ago, so a rolling update may be under way, with replicas that load that version: "+
				"nothing was stored; send the request again (with the same Idempotency-Key, if it had one) after Retry-After and a replica that has the version takes it, "+
				"or omit prompt_version to run the version loaded here", cause, int(rolloutWindow.Minutes())),
			RetryAfter: promptUnavailableRetry}
	}
	detail := cause.Error()
	if errors.Is(err, prompt.ErrUnknownVersion) {
		detail = fmt.Sprintf("%v, and no rolling update is under way here (this replica has been up for %d minutes or more): the version is retired or not deployed; "+
			"omit prompt_version to run the version loaded here, or name that one", cause, int(rolloutWindow.Minutes()))
	}
	return &problem{Status: http.StatusUnprocessableEntity, Type: "unknown-prompt", Title: "Unknown prompt", Detail: detail}
}

// retryPromptUnavailable answers a retry of a failed prompt job whose prompt
// version this replica does not load (err says which), before anything is
// written: the job stays failed, and a retry's Idempotency-Key is not taken.
// As promptElsewhere decides (for a resolution too): while the version may be
// another deployment's (a rolling update), 503 prompt-unavailable with
// Retry-After, so that the client sends the retry again and reaches a replica
// that has it; once the version has been retired (rolloutOver), a final 422
// prompt-retired, since no replica can run the job again.
func (s *Server) retryPromptUnavailable(w http.ResponseWriter, r *http.Request, job *store.Job, err error) {
	elsewhere, err := s.promptElsewhere(r.Context(), job, err)
	if !elsewhere {
		writeProblem(w, r, problem{Status: http.StatusUnprocessableEntity, Type: "prompt-retired", Title: "The job's prompt version is no longer deployed",
			Detail: fmt.Sprintf("the job was created with prompt %q version %q, which this deployment no longer loads (%v), so no replica can run it again; "+
				"the job was not retried and is still failed: %s. Nothing was changed",
				job.Operation, job.PromptVersion, err, promptRetiredAgain), JobID: job.ID})
		return
	}
	writeProblem(w, r, problem{Status: http.StatusServiceUnavailable, Type: "prompt-unavailable", Title: "This replica cannot run the job's prompt version",
		Detail: fmt.Sprintf("the job was created with prompt %q version %q and this replica cannot load it (%v); the job was not retried and is still failed: "+
			"send the retry again (with the same Idempotency-Key, if it had one) after Retry-After: a replica running that version (another one, or this one after a rolling update finishes) runs it. Nothing was changed",
			job.Operation, job.PromptVersion, err), JobID: job.ID, RetryAfter: promptUnavailableRetry})
}
