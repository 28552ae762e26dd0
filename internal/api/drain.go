package api

import "sync"

// drainer releases waiting callers when the process shuts down.
type drainer struct {
	once sync.Once
	ch   chan struct{} // closed by Drain
}

func (d *drainer) init() { d.ch = make(chan struct{}) }

// Drain answers every caller waiting for a job (Prefer: wait, chat
// completions) at once with the job as it stands, and makes later waits return
// at once: a POST /v1/jobs gets 202 with Location, a chat completion 504
// still_running (resend with the same Idempotency-Key to attach elsewhere).
// Call it when the process is told to stop, before the HTTP server's Shutdown.
func (s *Server) Drain() { s.drain.once.Do(func() { close(s.drain.ch) }) }

// draining says whether Drain was called.
func (s *Server) draining() bool {
	select {
	case <-s.drain.ch:
		return true
	default:
		return false
	}
}
