package api

import "time"

// SetStarted sets when s counts itself started (promptUnavailable).
func SetStarted(s *Server, at time.Time) { s.started = at }
