package api

import (
	"net/http"
	"sync"
)

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
// A chat completion without a key whose job is not yet stored is refused
// instead (refuseKeylessWhileDraining).
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

// refuseKeylessWhileDraining answers a chat completion sent without an
// Idempotency-Key that would create its job after Drain began: 503
// unavailable with Retry-After: 1 and no X-Should-Retry, nothing stored. This
// replica would run none of it, and its caller (an OpenAI SDK, which cannot
// attach to a job without a key) could never get the answer of a job stored
// here and run by another replica: its SDK resends the refusal, and the
// balancer sends it to a live replica. A keyed call is not refused: its job
// is handed over, and a resend with the key attaches to it.
func (s *Server) refuseKeylessWhileDraining(w http.ResponseWriter, ownKey bool) bool {
	if ownKey || !s.draining() {
		return false
	}
	w.Header().Set("Retry-After", "1")
	writeOpenAIError(w, http.StatusServiceUnavailable, "server_error", "unavailable", "",
		"this router replica is shutting down; nothing was stored: send the request again (the load balancer sends it to a live replica)")
	return true
}
