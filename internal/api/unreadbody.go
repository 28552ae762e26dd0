package api

import (
	"net/http"
	"time"
)

// closeUnreadBody makes an answer given before any endpoint took the request
// close the connection when the request has a body: a refused API key
// (missing, unknown, or uncheckable), an owner past its requests_per_second,
// a path or method no endpoint takes, a health check. No body is read for
// those — the tenant listener reads a body only once its API key is valid and
// its owner's rate token taken (withOwner, WrapAuthenticated), so a client
// the router has not authenticated, or one past its rate, cannot make it
// buffer http.max_body_bytes or wait http.read_body_timeout for the body.
//
// Kept open, the connection would need the rest of the body read first, and
// net/http does that before it sends the answer's headers: with less than
// 256 KiB of it left (or a chunked body) it reads that rest, so a client that
// stalls its body would hold back its own 401 until a read deadline passes
// (the server has no ReadTimeout: without the one set here, never); with
// more left it closes the connection anyway. Closing costs a client that sent
// a wrong key or path one new connection, which it needs only after fixing
// the request.
//
// After the answer, net/http still reads (and discards) up to 256 KiB of the
// rest before it closes, so that unread input does not make the close a reset
// that can destroy the answer before the client reads it; the read deadline
// bounds that to unreadBodyGrace, the time net/http itself gives a client to
// read an answer before closing a connection with more than 256 KiB unread
// (its rstAvoidanceDelay). An unauthenticated client therefore keeps the
// connection for at most that, not for http.read_body_timeout.
//
// A client that sends the rest of its body slowly (more than the grace) may
// see the connection reset before it reads the answer: net/http's lingering
// close is skipped when that read times out. Only a slow upload with a wrong
// key or path is concerned, and it learns what was wrong by retrying with a
// short body.
//
// Only HTTP/1 is concerned (requestInfo.unreadBody): HTTP/2 ends an unread
// body with its stream, and takes Connection: close as a reason to shut the
// whole connection down.
func closeUnreadBody(w http.ResponseWriter) {
	w.Header().Set("Connection", "close")
	// A connection without deadlines (not HTTP/1 over TCP) refuses it.
	_ = http.NewResponseController(w).SetReadDeadline(time.Now().Add(unreadBodyGrace))
}

// unreadBodyGrace is net/http's rstAvoidanceDelay (net/http/server.go).
const unreadBodyGrace = 500 * time.Millisecond
