package api

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/http"
	"strings"
	"sync/atomic"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/routerhq/router/internal/store"
	"github.com/routerhq/router/internal/telemetry"
)

// RequestIDHeader carries the request id: the caller's when it sent a usable
// one, else one the router makes. It is echoed on every response, in
// problem+json bodies (request_id) and in the access log.
const RequestIDHeader = "X-Request-Id"

type requestIDKey struct{}

// requestInfo is what the access log says of a request beyond its line:
// its id, and the owner once authentication found it (set by withOwner,
// read when the request ends); and whether the request has a body no
// endpoint has taken yet (its answer then closes the connection,
// closeUnreadBody). errorStatus is the status of an error answered inside a
// stream whose 200 was already sent (an SSE error event): the request is
// counted, logged and traced with it (noteStreamError).
type requestInfo struct {
	id          string
	owner       string
	unreadBody  bool
	errorStatus int
	// writeFailed is set by the first failed write of the answer: the
	// caller left (or its connection broke) while it was being sent, which
	// the access-log line says beside the status the headers carried.
	writeFailed atomic.Bool
}

// RequestID is the request id of ctx ("" outside a request).
func RequestID(ctx context.Context) string {
	if info, _ := ctx.Value(requestIDKey{}).(*requestInfo); info != nil {
		return info.id
	}
	return ""
}

// noteOwner records the request's owner for its access-log line, once its
// API key is valid: from then on its body is its endpoint's to read (through
// what WrapAuthenticated added), and net/http's to finish as usual.
func noteOwner(ctx context.Context, owner string) {
	if info, _ := ctx.Value(requestIDKey{}).(*requestInfo); info != nil {
		info.owner = owner
		info.unreadBody = false
	}
}

// noteStreamError records, for the request's metrics label, access-log line
// and span, the status of the error an SSE error event carried: the wire's
// status is the 200 the stream's headers already sent, but the request failed
// as that status says (a 502 upstream_failed is a 502 to an operator).
func noteStreamError(ctx context.Context, status int) {
	if info, _ := ctx.Value(requestIDKey{}).(*requestInfo); info != nil {
		info.errorStatus = status
	}
}

// requestID is the caller's X-Request-Id when it is 1 to 128 visible ASCII
// characters, else a new random one.
func requestID(r *http.Request) string {
	if id := r.Header.Get(RequestIDHeader); len(id) > 0 && len(id) <= 128 {
		ok := true
		for i := 0; i < len(id); i++ {
			if id[i] <= ' ' || id[i] > '~' {
				ok = false
				break
			}
		}
		if ok {
			return id
		}
	}
	var b [12]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

const tracerName = "github.com/routerhq/router/internal/api"

// startRequestSpan continues the caller's trace (traceparent) when there is one
// and starts the request's server span. With tracing off (telemetry.Off) it
// starts none: the span returned does not record, and carries the trace of the
// context's span, if any (the access log's trace_id). The span is named by the
// method alone until endRequestSpan knows the route: a name holding the path
// ("GET /v1/jobs/<id>") is one per job to a backend, and a caller-sized one
// (a span's name, unlike its attributes, is not cut by the SDK).
func startRequestSpan(r *http.Request, info *requestInfo) (*http.Request, trace.Span) {
	requestID := info.id
	ctx := otel.GetTextMapPropagator().Extract(r.Context(), propagation.HeaderCarrier(r.Header))
	if telemetry.Off() {
		if trace.SpanFromContext(ctx).IsRecording() {
			// A span recorded by whatever serves the router (middleware with
			// a provider of its own) is not the router's to rename or end:
			// hand back a non-recording span in its trace instead.
			ctx = trace.ContextWithSpanContext(ctx, trace.SpanContextFromContext(ctx))
		}
		ctx = context.WithValue(ctx, requestIDKey{}, info)
		return r.WithContext(ctx), trace.SpanFromContext(ctx)
	}
	method, known := requestMethod(r.Method)
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	attrs := []attribute.KeyValue{
		attribute.String("http.request.method", method),
		attribute.String("url.scheme", scheme),
		attribute.String("url.path", r.URL.Path),
		attribute.String("router.request.id", requestID),
	}
	if !known {
		attrs = append(attrs, attribute.String("http.request.method_original", r.Method))
	}
	ctx, span := otel.Tracer(tracerName).Start(ctx, spanMethod(r.Method), trace.WithSpanKind(trace.SpanKindServer), trace.WithAttributes(attrs...))
	ctx = context.WithValue(ctx, requestIDKey{}, info)
	return r.WithContext(ctx), span
}

// endRequestSpan names the span after the route that served the request and
// records its status: wire is the status the response carried, status the
// one the request is judged by (a stream's error event's, noteStreamError;
// else wire), which sets the span's status. Named as the HTTP semantic
// conventions have it: "{method} {route}" ("GET /v1/jobs/{id}"), with the
// route's path template as http.route; a request no endpoint matched (the
// mux's catch-all, or answered before the mux) has no http.route and keeps
// the method's name.
func endRequestSpan(span trace.Span, r *http.Request, wire, status int) {
	if span.IsRecording() {
		if route := httpRoute(r.Pattern); route != "" {
			span.SetName(spanMethod(r.Method) + " " + route)
			span.SetAttributes(attribute.String("http.route", route))
		}
		span.SetAttributes(attribute.Int("http.response.status_code", wire))
		if status != wire {
			span.SetAttributes(attribute.Int("router.stream.error_status", status))
		}
		if status >= 500 {
			span.SetStatus(codes.Error, http.StatusText(status))
		}
	}
	span.End()
}

// knownMethods are the methods the HTTP semantic conventions know (RFC 9110's
// and PATCH), spelled exactly.
var knownMethods = map[string]bool{
	http.MethodConnect: true, http.MethodDelete: true, http.MethodGet: true, http.MethodHead: true, http.MethodOptions: true,
	http.MethodPatch: true, http.MethodPost: true, http.MethodPut: true, http.MethodTrace: true,
}

// requestMethod is http.request.method: the method when known, else _OTHER
// (the caller's own then goes in http.request.method_original), so that
// callers cannot make one attribute value per request.
func requestMethod(m string) (method string, known bool) {
	if knownMethods[m] {
		return m, true
	}
	return "_OTHER", false
}

// spanMethod is the method part of a request span's name: the method when
// known, else "HTTP".
func spanMethod(m string) string {
	if knownMethods[m] {
		return m
	}
	return "HTTP"
}

// httpRoute is the path template of the mux pattern that served a request
// ("GET /v1/jobs/{id}" gives "/v1/jobs/{id}"): its method and host left out.
// The catch-all "/" (noEndpoint: no endpoint matched) and no pattern
// (answered before the mux) give "".
func httpRoute(pattern string) string {
	if pattern == "" || pattern == "/" {
		return ""
	}
	if i := strings.IndexByte(pattern, '/'); i >= 0 {
		return pattern[i:] // "METHOD host/path": the path starts at the first slash
	}
	return ""
}

// contextSubmitter is an Executor that can put a job's trace under the
// request that created it (race.Runner is one).
type contextSubmitter interface {
	SubmitNewContext(ctx context.Context, job *store.Job, plan store.JobPlan)
}

// submitNew hands a just-created job to the executor, with the request's trace
// when the executor takes it.
func (s *Server) submitNew(ctx context.Context, job *store.Job, plan store.JobPlan) {
	if cs, ok := s.Exec.(contextSubmitter); ok {
		cs.SubmitNewContext(ctx, job, plan)
		return
	}
	s.Exec.SubmitNew(job, plan)
}
