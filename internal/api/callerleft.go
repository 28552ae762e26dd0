package api

import (
	"context"
	"errors"
	"net/http"
)

// callerLeft reports whether r's caller hung up (or gave up) before the
// router could answer: there is no one to tell of the error err, which is,
// as a rule, the cancellation itself and no fault of the router. The handler
// then answers nothing, and ServeHTTP counts and logs the request as 499
// (client closed request), not as the 500 or 503 an operator would be paged
// for. Whatever was already durable stays: a resend with the same
// Idempotency-Key finds it. An error of another kind is still logged as one.
func (s *Server) callerLeft(r *http.Request, what string, err error) bool {
	if r.Context().Err() == nil {
		return false
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		s.reqLog(r).Debug("caller left while the router tried to "+what, "err", err)
	} else {
		s.reqLog(r).Error(what+" failed (and the caller left)", "err", err)
	}
	return true
}
