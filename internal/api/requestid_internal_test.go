package api

import (
	"context"
	"net/http/httptest"
	"testing"

	"go.opentelemetry.io/otel"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace/noop"
)

// With tracing off the router makes no request span; a span that whatever
// serves the router recorded (middleware with a provider of its own) stays
// that middleware's: the router neither renames, annotates nor ends it, and
// the request keeps its trace.
func TestRequestSpanLeavesAnOuterSpanAloneWithTracingOff(t *testing.T) {
	before := otel.GetTracerProvider()
	otel.SetTracerProvider(noop.NewTracerProvider())
	t.Cleanup(func() { otel.SetTracerProvider(before) })
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	defer func() { _ = tp.Shutdown(context.Background()) }()

	ctx, outer := tp.Tracer("middleware").Start(context.Background(), "outer")
	r := httptest.NewRequest("POST", "/v1/jobs", nil).WithContext(ctx)
	r.Pattern = "POST /v1/jobs"
	r, span := startRequestSpan(r, &requestInfo{id: "req-1"})
	if span.IsRecording() || span.SpanContext().TraceID() != outer.SpanContext().TraceID() {
		t.Fatalf("request span: recording %v, trace %s; want a non-recording span in trace %s",
			span.IsRecording(), span.SpanContext().TraceID(), outer.SpanContext().TraceID())
	}
	if RequestID(r.Context()) != "req-1" {
		t.Fatalf("request id %q", RequestID(r.Context()))
	}
	endRequestSpan(span, r, 500, 500)
	if !outer.IsRecording() {
		t.Fatal("the router ended the middleware's span")
	}
	outer.End()
	spans := exp.GetSpans()
	if len(spans) != 1 || spans[0].Name != "outer" || len(spans[0].Attributes) != 0 {
		t.Fatalf("the middleware's span was changed: %+v", spans)
	}
}
