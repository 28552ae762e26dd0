package api

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/routerhq/router/internal/prompt"
	"github.com/routerhq/router/internal/store"
)

// retryPromptUnavailable answers a retry of a failed prompt job whose prompt
// version this replica does not load (err says which), before anything is
// written: the job stays failed, and a retry's Idempotency-Key is not taken.
// As promptUnavailable decides for a resolution: while the version may be
// another deployment's (a rolling update), 503 prompt-unavailable with
// Retry-After, so that the client sends the retry again and reaches a replica
// that has it; once the version has been retired (promptRetired), a final 422
// prompt-retired, since no replica can run the job again.
func (s *Server) retryPromptUnavailable(w http.ResponseWriter, r *http.Request, job *store.Job, err error) {
	// The prompt set's own error, without what the executor wrapped it in
	// ("the prompt is no longer loaded", untrue of a newer version).
	for u := errors.Unwrap(err); u != nil && u != prompt.ErrUnknownPrompt && u != prompt.ErrUnknownVersion; u = errors.Unwrap(err) {
		err = u
	}
	if s.promptRetired(r.Context(), job) {
		writeProblem(w, r, problem{Status: http.StatusUnprocessableEntity, Type: "prompt-retired", Title: "The job's prompt version is no longer deployed",
			Detail: fmt.Sprintf("the job was created with prompt %q version %q, which this deployment no longer loads (%v), so no replica can run it again; "+
				"the job was not retried and is still failed: send the request as a new job (POST /v1/jobs with a new Idempotency-Key) to run the prompt's current version. Nothing was changed",
				job.Operation, job.PromptVersion, err), JobID: job.ID})
		return
	}
	w.Header().Set("Retry-After", retryAfterSeconds(promptUnavailableRetry))
	writeProblem(w, r, problem{Status: http.StatusServiceUnavailable, Type: "prompt-unavailable", Title: "This replica cannot run the job's prompt version",
		Detail: fmt.Sprintf("the job was created with prompt %q version %q and this replica cannot load it (%v); the job was not retried and is still failed: "+
			"send the retry again (with the same Idempotency-Key, if it had one) after Retry-After: a replica running that version (another one, or this one after a rolling update finishes) runs it. Nothing was changed",
			job.Operation, job.PromptVersion, err), JobID: job.ID})
}
