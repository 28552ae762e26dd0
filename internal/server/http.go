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
// legitimately last minutes. A body must arrive within http.read_body_timeout:
// h reads it (withBodyRead; on the tenant listener once the API key is valid,
// readTenantBodies; the operator listener reads none, ops.Server refuses a body).
func newHTTPServer(h http.Handler, c config.HTTP) *http.Server {
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: c.ReadHeaderTimeout.D(),
		IdleTimeout:       c.IdleTimeout.D(),
	}
}

// readTenantBodies makes the tenant API read a request's body only once its
// API key is valid (api.Server.WrapAuthenticated): a client that has not
// authenticated cannot make the router buffer http.max_body_bytes or wait
// http.read_body_timeout for its body (the API answers it without reading the
// body, and closes the connection). An authenticated request's body is read
// as before, inside the API's request id, access log and metrics, so a 408 or
// 400 for it is answered and logged like any request.
func readTenantBodies(srv *api.Server, c config.HTTP) { srv.WrapAuthenticated(withBodyRead(c)) }

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
// cancel a long-poll's context when it passes.
func readBodyFirst(h http.Handler, timeout time.Duration, max int64) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if timeout <= 0 || r.Body == nil || r.Body == http.NoBody {
			h.ServeHTTP(w, r)
			return
		}
		rc := http.NewResponseController(w)
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
