package api

import (
	"errors"

	"github.com/routerhq/router/internal/store"
)

// busy says whether err is a row another transaction held past the store's
// bounded lock wait (store.Busy), and says for the caller what was held and
// by whom; the caller's answer goes on to say that nothing was stored and
// that the same request may be sent again. The owner's max_live_jobs check
// (store.ErrLiveLimitBusy) is no row of the request's: its key is not held.
func busy(err error) (why string, ok bool) {
	if !store.Busy(err) {
		return "", false
	}
	if errors.Is(err, store.ErrLiveLimitBusy) {
		return "the owner's live-jobs check (limits.max_live_jobs) is busy: another request creating or retrying " +
			"a job of the same owner, on this or another router, held it past the wait", true
	}
	held := "a row this request needs"
	if be := (*store.BusyError)(nil); errors.As(err, &be) && be.What != "" {
		held = be.What
	}
	return "another transaction holds " + held + " (a concurrent request cancelling, retrying or resolving it, " +
		"or a database session left open)", true
}
