package api

import (
	"errors"

	"github.com/routerhq/router/internal/store"
)

// busy says whether err is a row another transaction held past the store's
// bounded lock wait (store.Busy), and names the row for the caller.
func busy(err error) (held string, ok bool) {
	if !store.Busy(err) {
		return "", false
	}
	held = "a row this request needs"
	if be := (*store.BusyError)(nil); errors.As(err, &be) && be.What != "" {
		held = be.What
	}
	return held, true
}
