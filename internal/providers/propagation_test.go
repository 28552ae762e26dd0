package providers

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/routerhq/router/internal/providers/anthropicfake"
)

// Outbound provider calls carry the attempt's trace context (traceparent).
func TestProviderCallsCarryTraceparent(t *testing.T) {
	tp := sdktrace.NewTracerProvider()
	otel.SetTracerProvider(tp)
	otel.SetTextMapPropagator(propagation.TraceContext{})
	t.Cleanup(func() {
		otel.SetTracerProvider(noop.NewTracerProvider())
		otel.SetTextMapPropagator(propagation.NewCompositeTextMapPropagator())
		_ = tp.Shutdown(context.Background())
	})
	ctx, span := tp.Tracer("test").Start(context.Background(), "attempt")
	defer span.End()
	traceID := span.SpanContext().TraceID().String()

	var mu sync.Mutex
	var seen string
	srv := newFakeServer(t, func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = r.Header.Get("traceparent")
		mu.Unlock()
		writeError(w, 200, nil, completionBody)
	})
	if _, err := newTestAdapter(t, srv.URL+"/v1", nil).Complete(ctx, testRequest()); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	got := seen
	mu.Unlock()
	if !strings.Contains(got, traceID) {
		t.Fatalf("OpenAI-compatible call: traceparent %q lacks trace %s", got, traceID)
	}

	claude := anthropicfake.New(t, fixedReply(anthropicfake.Reply{Text: "ok"}))
	if _, err := newAnthropicAdapter(t, claude.URL, nil).Complete(ctx, testRequest()); err != nil {
		t.Fatal(err)
	}
	if tpHeader := claude.Requests()[0].Header.Get("traceparent"); !strings.Contains(tpHeader, traceID) {
		t.Fatalf("Anthropic call: traceparent %q lacks trace %s", tpHeader, traceID)
	}
}
