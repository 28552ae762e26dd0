package api

import (
	"errors"
	"net/http"

	"github.com/routerhq/router/internal/chat"
	"github.com/routerhq/router/internal/store"
)

// replayChatUnknownRoute answers a keyed chat call whose model names neither
// a route nor an alias this replica configures, when its Idempotency-Key
// already holds its job. During a rolling update that adds a route, a resend
// whose first call reached a new replica (its job ran, and was billed) may
// reach an old one: a 404 "does not exist" would read as "not done" for a
// job that exists, and OpenAI's SDKs do not resend it. The model is then
// looked up as a route of that name: its scope (chat:<model>) and the
// fingerprint of the normalised request need no route configured, as POST
// /v1/jobs's look-up before its 422 needs no prompt (replayUnparsed). The
// same request gets its job, as any replay; another request under the key
// gets the usual 409; a request that does not normalise, no key, or a key
// that holds nothing reports false and the caller answers its 404. An alias
// (a route's `models` entry) this replica lacks cannot be resolved to its
// route here, and is not looked up. One read, on the 404's path only, once no
// transaction is still writing the key (store.AwaitJobHoldingKey): another
// replica's claim of it may be committing; a row still held past the wait is
// answered 503 busy (resend with the same key), never the 404.
func (s *Server) replayChatUnknownRoute(w http.ResponseWriter, r *http.Request, owner string, req *chat.Request) (handled bool) {
	if req.Model == "" || len(r.Header.Values("Idempotency-Key")) == 0 {
		return false
	}
	key, perr := idempotencyKey(r)
	if perr != nil {
		return false
	}
	in, err := req.NormalizeFor(owner)
	if err != nil {
		return false // no replica stored a job of it
	}
	route := req.Model
	op := chat.Operation(route)
	_, fp, err := chatIntent(in, op, route)
	if err != nil {
		return false
	}
	job, err := s.Store.AwaitJobHoldingKey(r.Context(), owner, op, key, fp)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return false
	case errors.Is(err, store.ErrKeyReused):
		s.Counters.KeyConflict()
		noSDKRetry(w) // the same request with the same key is refused again
		detail, earlier := s.keyReusedDetail(r, owner, op, key, fp)
		if earlier != "" {
			w.Header().Set("X-Router-Job-Id", earlier)
		}
		writeOpenAIError(w, http.StatusConflict, "invalid_request_error", "idempotency_key_reused", "", detail)
	case err != nil:
		s.chatInternal(w, r, "check the idempotency key", err)
	default:
		s.answerChatJob(w, r, req, job, false, nil, func() {}, true)
	}
	return true
}
