package api

import (
	"errors"
	"net/http"

	"github.com/routerhq/router/internal/store"
)

// replayUnparsed answers a POST /v1/jobs that this replica cannot turn into a
// job — its prompt, prompt version or route is not loaded here, its input
// fails the loaded prompt's input schema, or the prompt does not render it —
// when its Idempotency-Key already holds a job. After a deploy that changes a
// prompt (or during the rolling update), a client whose answer was lost
// retries with the same key; a 422 would read as "not done" and invite a new
// key, a second job and a second charge (SPEC §1, §5). So: the same request
// (by the fingerprint of the request as sent, which needs no prompt) gets its
// job, as any replay; another request gets the usual 409; no job, or a key
// that has expired, reports false and the caller answers its 422. One read,
// on the rejection path only.
func (s *Server) replayUnparsed(w http.ResponseWriter, r *http.Request, owner, key string, req *createJobRequest) (handled bool) {
	if req.Prompt == "" || len(req.Input) == 0 {
		return false
	}
	fp, err := store.Fingerprint(req.Prompt, req.PromptVersion, req.Route, req.Input)
	if err != nil {
		return false // not JSON: no job was created from it either
	}
	job, err := s.Store.JobHoldingKey(r.Context(), owner, req.Prompt, key, fp)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return false
	case errors.Is(err, store.ErrKeyReused):
		s.keyReused(w, r, owner, req.Prompt, key)
	case err != nil:
		s.internalError(w, r, "check the idempotency key", err)
	default:
		s.answerJob(w, r, owner, job, false, nil)
	}
	return true
}
