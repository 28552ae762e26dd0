package api

import (
	"log/slog"
	"net/http"
)

// reqLog is the server's logger for a line about request r: it carries the
// request's id (the request_id of its answer and access line, so an operator
// handed one by a tenant finds why it failed) and its path, clipped
// (loggedPath). Made only on the paths that log.
func (s *Server) reqLog(r *http.Request) *slog.Logger {
	return s.Log.With(slog.String("request_id", RequestID(r.Context())), loggedPath(r.URL.Path))
}
