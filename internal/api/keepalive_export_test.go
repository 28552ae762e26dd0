package api

// SetBlankKeepAlive has s send its streams' keep-alives as bare blank lines
// (Config.StreamBlankKeepAlive, chat.keepalive: blank). Call it before s
// serves its first request.
func SetBlankKeepAlive(s *Server) { s.cfg.StreamBlankKeepAlive = true }
