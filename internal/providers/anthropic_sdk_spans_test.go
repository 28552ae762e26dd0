package providers

import (
	"context"
	"strings"
	"testing"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/routerhq/router/internal/providers/anthropicfake"
)

// The Anthropic SDK records a span of its own per call through the global
// tracer provider — the router's — and reads
// ANTHROPIC_OPEN_TELEMETRY_TRACES_CONTENT_MODE from the environment whatever
// WithoutEnvironmentDefaults says: with it set to "content" (for another
// Anthropic application in the same pod), every Anthropic attempt exported
// the tenant's prompt and the model's answer as span attributes; and its span,
// a second GenAI client span under the attempt's, doubled the attempt's token
// usage for anything that sums GenAI spans. The router's attempt span is the
// call's only span; the trace context still reaches the provider (the
// router's transport sends it: TestProviderCallsCarryTraceparent). Found by
// review.
func TestAnthropicSDKRecordsNoSpanOfItsOwn(t *testing.T) {
	for _, mode := range []string{"", "content"} {
		t.Run("content_mode="+mode, func(t *testing.T) {
			t.Setenv("ANTHROPIC_OPEN_TELEMETRY_TRACES_CONTENT_MODE", mode)
			rec := tracetest.NewSpanRecorder()
			tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
			otel.SetTracerProvider(tp)
			otel.SetTextMapPropagator(propagation.TraceContext{})
			t.Cleanup(func() {
				otel.SetTracerProvider(noop.NewTracerProvider())
				otel.SetTextMapPropagator(propagation.NewCompositeTextMapPropagator())
				_ = tp.Shutdown(context.Background())
			})
			ctx, span := tp.Tracer("test").Start(context.Background(), "attempt")
			claude := anthropicfake.New(t, fixedReply(anthropicfake.Reply{Text: "ANSWER-SECRET-42"}))
			req := testRequest()
			req.Messages = []Message{{Role: "user", Content: "PROMPT Jane Doe card 4111 1111 1111 1111"}}
			if _, err := newAnthropicAdapter(t, claude.URL, nil).Complete(ctx, req); err != nil {
				t.Fatal(err)
			}
			span.End()
			for _, s := range rec.Ended() {
				if s.Name() == "attempt" {
					continue
				}
				var attrs []string
				for _, a := range s.Attributes() {
					attrs = append(attrs, string(a.Key)+"="+a.Value.Emit())
				}
				t.Errorf("span %q recorded beside the router's attempt span: %s", s.Name(), strings.Join(attrs, ", "))
			}
			if tpHeader := claude.Requests()[0].Header.Get("traceparent"); !strings.Contains(tpHeader, span.SpanContext().TraceID().String()) {
				t.Fatalf("the Anthropic call's traceparent %q lacks the attempt's trace", tpHeader)
			}
		})
	}
}
