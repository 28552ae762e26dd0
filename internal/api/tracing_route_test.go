package api_test

import (
	"testing"

	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
)

// A request's server span follows the HTTP semantic conventions: http.route is
// the path template alone (it was the mux pattern, "GET /v1/jobs/{id}", method
// included); url.scheme is set; a method the conventions do not know is
// _OTHER, with the caller's in http.request.method_original, and names the
// span "HTTP"; a request no endpoint matched is named by its method (it was
// "/", the catch-all's pattern, with http.route "/"). A matched route's span
// keeps its "{method} {route}" name. Found by review.
func TestRequestSpanFollowsTheHTTPConventions(t *testing.T) {
	exp := installTestTracing(t)
	b := setup(t, options{})
	for _, req := range []struct{ method, path, id string }{
		{"GET", "/v1/jobs/00000000-0000-0000-0000-000000000000", "req-matched"},
		{"HEAD", "/v1/jobs/00000000-0000-0000-0000-000000000000", "req-head"},
		{"GET", "/no/such/endpoint", "req-unmatched"},
		{"PURGE", "/v1/jobs", "req-other"},
	} {
		b.do(t, req.method, req.path, acmeKey, "", "X-Request-Id", req.id)
	}
	b.srv.Close() // every request's span has ended

	byID := map[string]tracetest.SpanStub{}
	for _, s := range exp.GetSpans() {
		if s.SpanKind == trace.SpanKindServer {
			byID[attrs(s)["router.request.id"].AsString()] = s
		}
	}
	for _, want := range []struct {
		id, name, method, original, route string
	}{
		{"req-matched", "GET /v1/jobs/{id}", "GET", "", "/v1/jobs/{id}"},
		{"req-head", "HEAD /v1/jobs/{id}", "HEAD", "", "/v1/jobs/{id}"},
		{"req-unmatched", "GET", "GET", "", ""},
		{"req-other", "HTTP", "_OTHER", "PURGE", ""},
	} {
		s, ok := byID[want.id]
		if !ok {
			t.Errorf("%s: no server span", want.id)
			continue
		}
		a := attrs(s)
		if s.Name != want.name {
			t.Errorf("%s: span name %q, want %q", want.id, s.Name, want.name)
		}
		if a["http.request.method"].AsString() != want.method || a["http.request.method_original"].AsString() != want.original {
			t.Errorf("%s: http.request.method %q, http.request.method_original %q; want %q, %q", want.id,
				a["http.request.method"].AsString(), a["http.request.method_original"].AsString(), want.method, want.original)
		}
		if route, has := a["http.route"]; route.AsString() != want.route || has != (want.route != "") {
			t.Errorf("%s: http.route %q (set %v), want %q", want.id, route.AsString(), has, want.route)
		}
		if a["url.scheme"].AsString() != "http" {
			t.Errorf("%s: url.scheme %q, want http", want.id, a["url.scheme"].AsString())
		}
	}
}
