package api

import "log/slog"

// logMethodBytes is the most of a request's method its log lines carry: a
// method is the caller's too, up to net/http's header limit on any request,
// authenticated or not, and the 405 that answers a long one quotes only 64
// bytes of it (rfcproblem.Clip). A real method is a few letters.
const logMethodBytes = 64

// loggedMethod is the "method" attribute of a request's log lines: method,
// or when it is longer than logMethodBytes its first logMethodBytes with "…",
// and method_bytes, its whole length. net/http takes only a token (ASCII) as
// a method, so any byte is a character's start.
func loggedMethod(method string) slog.Attr {
	if len(method) <= logMethodBytes {
		return slog.String("method", method)
	}
	// An empty key inlines the group: method=… method_bytes=N.
	return slog.Group("", slog.String("method", method[:logMethodBytes]+"…"), slog.Int("method_bytes", len(method)))
}
