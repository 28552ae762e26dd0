package api

import "time"

// SetStarted sets when s counts itself started (promptUnavailable).
func SetStarted(s *Server, at time.Time) { s.started = at }

// SetClock sets this process's clock as s reads it (promptUnavailable): a
// test skews it against the database's.
func SetClock(s *Server, now func() time.Time) { s.now = now }
