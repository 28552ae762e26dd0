package api

import (
	"errors"
	"net/http"

	"github.com/routerhq/router/internal/chat"
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
// on the rejection path only, once no transaction is still writing the key
// (store.AwaitJobHoldingKey): another replica's claim of the same request may
// be committing (a resend during the rolling update), and its job must be
// replayed, not refused as "not done"; a row still held past the store's
// wait is answered 503 busy (resend with the same key), never the 422.
//
// A key's scope is its operation, and only POST /v1/jobs's are prompt names:
// a name that is a chat operation ("chat:<route>", which no prompt can be
// called: prompt names have no ':') is the chat endpoint's scope, where the
// same key may hold a chat call's job. POST /v1/jobs never created a job there,
// so nothing is looked up: the answer is the 422 (an unknown prompt), neither a
// 409 revealing the key's use on the chat endpoint nor a replay of a chat job.
func (s *Server) replayUnparsed(w http.ResponseWriter, r *http.Request, owner, key string, req *createJobRequest) (handled bool) {
	if req.Prompt == "" || len(req.Input) == 0 {
		return false
	}
	if _, isChat := chat.Route(req.Prompt); isChat {
		return false
	}
	fp, err := store.Fingerprint(req.Prompt, req.PromptVersion, req.Route, req.Input)
	if err != nil {
		return false // not JSON: no job was created from it either
	}
	job, err := s.Store.AwaitJobHoldingKey(r.Context(), owner, req.Prompt, key, fp)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return false
	case errors.Is(err, store.ErrKeyReused):
		s.keyReusedBy(w, r, owner, req.Prompt, key, fp)
	case err != nil:
		s.internalError(w, r, "check the idempotency key", err)
	default:
		s.answerJob(w, r, owner, job, false, nil)
	}
	return true
}
