package server

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"time"

	"github.com/routerhq/router/internal/api"
	"github.com/routerhq/router/internal/config"
	"github.com/routerhq/router/internal/problem"
)

// newHTTPServer is the http.Server of a listener: headers must arrive within
// http.read_header_timeout, and an idle keep-alive connection is closed after
// http.idle_timeout. There is no write timeout and no whole-request read
// timeout: either would cut long-polls (Prefer: wait) and chat streams, which
// legitimately last minutes. Instead the API bounds each write of an answer
// (a stream's event, a piece of a non-streamed body) to api.Config's
// StreamWriteStall, so a caller that stops reading cannot hold a handler for
// as long as its connection lasts. A body must arrive within
// http.read_body_timeout: h reads it (withBodyRead; on the tenant listener
// once the API key is valid and its owner's rate token taken,
// readTenantBodies; the operator listener reads none, ops.Server refuses a
// body).
// net/http reads headers up to goHeaderLimit; the tenant API refuses those
// over http.max_header_bytes itself (withHeaderLimit).
func newHTTPServer(h http.Handler, c config.HTTP) *http.Server {
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: c.ReadHeaderTimeout.D(),
		IdleTimeout:       c.IdleTimeout.D(),
		MaxHeaderBytes:    goHeaderLimit(c.MaxHeaderBytes),
	}
}

// readTenantBodies sets the tenant API's limits on what a request sends. Its
// headers: before routing and authentication, a request whose headers are
// over http.max_header_bytes is answered 431 (withHeaderLimit), so an
// oversized Authorization header is never hashed, looked up or cached. Its
// body is read only once its API key is valid and a token of its owner's
// requests_per_second taken (api.Server.WrapAuthenticated): a client that has
// not authenticated, or an owner past its rate, cannot make the router buffer
// http.max_body_bytes or wait http.read_body_timeout for its body (the API
// answers it without reading the body, and closes the connection), and a
// body that stalls or fails (408, 400) has cost its owner a token, so an
// owner holds at most burst + requests_per_second × http.read_body_timeout
// of them at once. An accepted request's body is read as before. Both run
// inside the API's request id, access log and metrics, so a 431, 408 or 400
// is answered and logged like any request.
func readTenantBodies(srv *api.Server, c config.HTTP) {
	srv.WrapRoutes(withHeaderLimit(c))
	srv.WrapAuthenticated(withBodyRead(c))
}

// headerLimit is the limit withHeaderLimit applies for http.max_header_bytes;
// an unset (or invalid, 0 or less) one is the default
// (config.DefaultMaxHeaderBytes).
func headerLimit(limit int64) int64 {
	if limit <= 0 {
		return config.DefaultMaxHeaderBytes
	}
	return limit
}

// goHeaderLimit is net/http's MaxHeaderBytes for http.max_header_bytes: its
// own 1 MiB default (or the limit, when larger) plus 4 KiB. net/http answers
// headers past it with a text/plain 431 that cannot carry the router's
// problem (SPEC §4), so it is set above the router's limit, and far enough
// above it that headers up to 1 MiB (what net/http read before this limit
// existed) are answered by withHeaderLimit in the endpoint's error shape.
// Only larger headers get net/http's plain answer, and the connection closed.
func goHeaderLimit(limit int64) int {
	return int(max(headerLimit(limit), config.MaxHeaderBytesCap) + 4<<10)
}

// withHeaderLimit answers 431 to a request whose headers (headerBytes) are
// over http.max_header_bytes, before it is routed or its API key checked: in
// OpenAI's error shape on the OpenAI-compatible endpoints, as a problem
// (headers-too-large) elsewhere. The connection is closed: its buffer grew
// to hold the headers.
func withHeaderLimit(c config.HTTP) func(http.Handler) http.Handler {
	limit := headerLimit(c.MaxHeaderBytes)
	return func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if n := headerBytes(r); n > limit {
				w.Header().Set("Connection", "close")
				bodyError(w, r, http.StatusRequestHeaderFieldsTooLarge, "headers-too-large", "Request headers too large", "headers_too_large",
					fmt.Sprintf("request headers are %d bytes; the limit is http.max_header_bytes = %d: send smaller headers", n, limit))
				return
			}
			h.ServeHTTP(w, r)
		})
	}
}

// headerBytes is the size of r's headers as HTTP/1.1 puts them on the wire:
// the request line ("METHOD target HTTP/1.1\r\n"), the Host header
// ("Host: host\r\n", which net/http takes out of r.Header), every field of
// r.Header as "Name: value\r\n" (a field sent on several lines counts once
// per line), and the blank line ending them. White space around a value and
// obsolete line folding are not counted; an HTTP/2 request is counted as if
// it had come in HTTP/1.1.
func headerBytes(r *http.Request) int64 {
	target := r.RequestURI
	if target == "" {
		target = r.URL.RequestURI()
	}
	n := int64(len(r.Method) + 1 + len(target) + 1 + len(r.Proto) + 2)
	if r.Host != "" {
		n += int64(len("Host: ") + len(r.Host) + 2)
	}
	for name, values := range r.Header {
		for _, v := range values {
			n += int64(len(name) + 2 + len(v) + 2)
		}
	}
	return n + 2
}

// withBodyRead is h reading each request's body first, within
// http.read_body_timeout and up to http.max_body_bytes (readBodyFirst).
func withBodyRead(c config.HTTP) func(http.Handler) http.Handler {
	return func(h http.Handler) http.Handler {
		return readBodyFirst(h, c.ReadBodyTimeout.D(), bodyLimit(c.MaxBodyBytes))
	}
}

// readBodyFirst reads a request's body (up to max+1 bytes, so handlers still
// see and refuse an oversized one) under a read deadline of timeout, then
// clears the deadline before the handler runs. net/http's ReadTimeout would
// instead leave the deadline on the connection, and its background read would
// cancel a long-poll's context when it passes. A body whose Content-Length
// is already over max is answered 413 without being read (tooLarge).
func readBodyFirst(h http.Handler, timeout time.Duration, max int64) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Body == nil || r.Body == http.NoBody {
			h.ServeHTTP(w, r)
			return
		}
		rc := http.NewResponseController(w)
		if r.ContentLength > max {
			// Known too large from its Content-Length: refused at once,
			// nothing of it read. With Expect: 100-continue the body is
			// not invited either (RFC 9110 §10.1.1): net/http sends
			// 100 Continue only when the body is first read.
			tooLarge(w, r, rc, timeout, max)
			return
		}
		if timeout <= 0 {
			h.ServeHTTP(w, r)
			return
		}
		if err := rc.SetReadDeadline(time.Now().Add(timeout)); err != nil {
			h.ServeHTTP(w, r) // a connection without deadlines (not HTTP/1 over TCP)
			return
		}
		// One byte past max, so handlers see (and refuse) an oversized body; at
		// math.MaxInt64, max+1 would wrap negative and read nothing.
		limit := max
		if limit < math.MaxInt64 {
			limit++
		}
		body, err := io.ReadAll(io.LimitReader(r.Body, limit))
		var ne net.Error
		switch {
		case errors.As(err, &ne) && ne.Timeout():
			w.Header().Set("Connection", "close")
			bodyError(w, r, http.StatusRequestTimeout, "request-body-timeout", "Request body too slow", "request_timeout",
				fmt.Sprintf("the request body did not arrive within %s (http.read_body_timeout); send the whole body promptly", timeout))
			return
		case err != nil:
			w.Header().Set("Connection", "close")
			bodyError(w, r, http.StatusBadRequest, "unreadable-body", "Unreadable body", "unreadable_body",
				"the request body could not be read: "+err.Error())
			return
		}
		if int64(len(body)) <= max {
			// The whole body is read: nothing more comes before the next request.
			_ = rc.SetReadDeadline(time.Time{})
		}
		r.Body = &readBody{Reader: bytes.NewReader(body), orig: r.Body}
		h.ServeHTTP(w, r)
	})
}

// tooLarge answers 413 to a request whose Content-Length is over max, its
// body unread. On HTTP/1 the connection is closed (net/http would otherwise
// read up to 256 KiB of the body before answering), and net/http's read of up
// to 256 KiB of what is left, after the answer and before it lets the
// connection go, is bounded by unreadBodyGrace, as for an answer the API gives
// before reading a body (api's closeUnreadBody). HTTP/2 ends the unread body
// with its stream.
func tooLarge(w http.ResponseWriter, r *http.Request, rc *http.ResponseController, timeout time.Duration, max int64) {
	if r.ProtoMajor == 1 {
		w.Header().Set("Connection", "close")
		grace := unreadBodyGrace
		if timeout > 0 {
			grace = min(grace, timeout)
		}
		_ = rc.SetReadDeadline(time.Now().Add(grace)) // refused without deadlines (not over TCP)
	}
	bodyError(w, r, http.StatusRequestEntityTooLarge, "body-too-large", "Body too large", "body_too_large",
		fmt.Sprintf("the body is %d bytes (Content-Length), larger than the limit of %d bytes (the router's http.max_body_bytes): send a smaller body", r.ContentLength, max))
}

// unreadBodyGrace is how long net/http may go on reading a body left unread
// after the answer (tooLarge): its rstAvoidanceDelay, as api's closeUnreadBody
// allows.
const unreadBodyGrace = 500 * time.Millisecond

// bodyLimit is the limit readBodyFirst applies for http.max_body_bytes. A
// limit config.Validate refuses (0 or less) is the API's own default, 1 MiB,
// rather than a limit that drops every body.
func bodyLimit(max int64) int64 {
	if max <= 0 {
		return 1 << 20 // api.Config's default for an unset limit
	}
	return max
}

// readBody replays a body read by readBodyFirst; Close closes the original.
type readBody struct {
	*bytes.Reader
	orig io.Closer
}

func (b *readBody) Close() error { return b.orig.Close() }

// BodyBuffered tells the API the body is read already: it checks the API key
// again once the body has arrived (api's checkKeyAfterBody), and need not
// read it first.
func (*readBody) BodyBuffered() {}

// bodyError answers a body that could not be read: in OpenAI's error shape on
// the OpenAI-compatible endpoints (docs/chat.md: SDKs read nothing else), as
// a problem (RFC 9457) everywhere else.
func bodyError(w http.ResponseWriter, r *http.Request, status int, typ, title, code, detail string) {
	if api.OpenAIShaped(r.URL.Path) {
		api.WriteOpenAIError(w, status, code, detail)
		return
	}
	problem.Write(w, r, problem.Details{Status: status, Type: typ, Title: title, Detail: detail, RequestID: api.RequestID(r.Context())})
}
