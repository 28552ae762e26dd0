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
	if cutAtShutdown(r) {
		s.reqLog(r).Warn("cut by the shutdown (shutdown.http ran out) while the router tried to "+what, "err", err)
		return true
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		s.reqLog(r).Debug("caller left while the router tried to "+what, "err", err)
	} else {
		s.reqLog(r).Error(what+" failed (and the caller left)", "err", err)
	}
	return true
}

// ErrCutAtShutdown is the cause with which the router cancels the requests
// still open when its shutdown's budget (shutdown.http) runs out: the caller
// did not leave; the router cut it. Such a request is counted and logged as
// 503, not as 499 (client closed request), and its failed statement is
// logged at warn.
var ErrCutAtShutdown = errors.New("cut by the router's shutdown (shutdown.http ran out)")

// cutAtShutdown says r's context was cancelled by the shutdown's cut.
func cutAtShutdown(r *http.Request) bool {
	return errors.Is(context.Cause(r.Context()), ErrCutAtShutdown)
}
