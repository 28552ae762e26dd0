package server

// ListenerReady is closed once s's listener has issued its first LISTEN (and
// dropped the key cache it may have missed revocations for).
func ListenerReady(s *Server) <-chan struct{} { return s.listener.Ready() }

// AuthEvicted is closed at the next eviction from s's key cache.
func AuthEvicted(s *Server) <-chan struct{} { return s.auth.Evicted() }
