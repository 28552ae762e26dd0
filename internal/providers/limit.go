package providers

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// DefaultMaxResponseBytes bounds what one call reads from a provider (a whole
// body, or a whole stream) when the adapter's configuration leaves it zero.
const DefaultMaxResponseBytes int64 = 8 << 20

// ResponseTooLargeError is the read error of a provider response that passed
// its bound: max_response_bytes (Limit), or, when Elements is set, the
// elements one JSON array of a 2xx answer may hold (arrayGuard). Adapters
// classify it as KindResponseTooLarge.
type ResponseTooLargeError struct {
	Limit    int64
	Elements int
	// Headers: the response's headers passed maxResponseHeaderBytes
	// (headersTooLarge).
	Headers bool
}

func (e *ResponseTooLargeError) Error() string {
	if e.Headers {
		return fmt.Sprintf("response headers larger than %d bytes", maxResponseHeaderBytes)
	}
	if e.Elements > 0 {
		return fmt.Sprintf("response holds a JSON array of more than %d elements", e.Elements)
	}
	return fmt.Sprintf("response larger than max_response_bytes (%d bytes)", e.Limit)
}

// tooLarge returns the *Error for err when a response bound was passed.
func tooLarge(provider string, err error) (*Error, bool) {
	var tl *ResponseTooLargeError
	if !errors.As(err, &tl) {
		return nil, false
	}
	msg := fmt.Sprintf("the provider sent more than max_response_bytes (%d bytes); the answer was discarded", tl.Limit)
	switch {
	case tl.Headers:
		msg = fmt.Sprintf("the provider's response headers are larger than %d bytes (net/http's bound on them, set by the router); the answer was discarded", maxResponseHeaderBytes)
	case tl.Elements > 0:
		msg = fmt.Sprintf("the provider's answer holds a JSON array of more than %d elements (choices, content blocks or tool calls: "+
			"an answer has a handful); the answer was discarded before it was decoded, as one past max_response_bytes is", tl.Elements)
	}
	e := NewError(provider, KindResponseTooLarge, msg)
	e.Err = err
	e.Received = true // the bytes past the limit came: the provider answered
	return e, true
}

// tooLargeResponse is tooLarge for an adapter's call traced by trace: a
// response bound passed on an error status's body (a 429, 400 or 503 whose
// body is larger than max_response_bytes) is classified by that status, as
// an error body that breaks off is — a 400 is not retried, a 429, 503 or 529
// keeps its Retry-After — and is no answer the provider began (Received
// false). Only a 2xx answer past the bound is KindResponseTooLarge.
func tooLargeResponse(provider string, trace *callTrace, err error) (*Error, bool) {
	e, ok := tooLarge(provider, err)
	if !ok {
		return nil, false
	}
	if _, status, retryAfter := trace.result(); status >= 400 {
		var tl *ResponseTooLargeError
		errors.As(err, &tl)
		e = ClassifyStatus(provider, status, "",
			fmt.Sprintf("HTTP %d error body larger than max_response_bytes (%d bytes)", status, tl.Limit))
		e.RetryAfter = retryAfter
		e.Err = err
	}
	return e, true
}

// limitClient bounds every response body c's transport returns to max bytes
// (max <= 0: DefaultMaxResponseBytes): reading past them fails with
// *ResponseTooLargeError, so a provider cannot make the router buffer without
// end. c is the adapter's own copy made by tracingClient.
func limitClient(c *http.Client, max int64) *http.Client {
	if max <= 0 {
		max = DefaultMaxResponseBytes
	}
	c.Transport.(*traceTransport).limit = max
	return c
}

type limitedBody struct {
	rc          io.ReadCloser
	left, limit int64
}

func (b *limitedBody) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	if b.left <= 0 {
		// Exactly limit bytes are allowed: only a byte beyond them is an error.
		var one [1]byte
		n, err := b.rc.Read(one[:])
		if n > 0 {
			return 0, &ResponseTooLargeError{Limit: b.limit}
		}
		return 0, err
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.rc.Read(p)
	b.left -= int64(n)
	return n, err
}

func (b *limitedBody) Close() error { return b.rc.Close() }

// maxResponseHeaderBytes bounds the headers of every response the adapters'
// own transport (NewTransport) reads, HTTP/1 and HTTP/2 alike: net/http's
// default is 10 MiB, outside max_response_bytes. A provider's headers are a
// few KiB.
const maxResponseHeaderBytes = 1 << 20

// headersTooLarge returns *ResponseTooLargeError (Headers) for the error of a
// round trip whose response's headers passed MaxResponseHeaderBytes, so that
// it is classified as a body past max_response_bytes is, and err otherwise.
// net/http's errors for it are unexported: matched by their text.
func headersTooLarge(err error) error {
	if err == nil {
		return nil
	}
	if s := err.Error(); strings.Contains(s, "server response headers exceeded") ||
		strings.Contains(s, "response header list larger than advertised limit") {
		return fmt.Errorf("%w: %w", &ResponseTooLargeError{Headers: true}, err)
	}
	return err
}
