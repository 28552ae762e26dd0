package api

// OnLiveKeyWait has f called whenever a request refused at max_live_jobs
// starts waiting for an admission under its own Idempotency-Key to end.
func OnLiveKeyWait(s *Server, f func()) { s.limits.keyWait.Store(&f) }
