package race

import (
	"context"
	"strings"
	"testing"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/store"
)

// A failed attempt's span status is its error's text, which the SDK does not
// cut: it is bounded here, so an error message an adapter forgot to cut (a
// cut stream quoted a 200 KB finish_reason) does not become a 200 KB status.
// An ordinary error (a message cut to 300 bytes) keeps its text whole.
func TestAttemptSpanStatusIsBounded(t *testing.T) {
	before := otel.GetTracerProvider()
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	otel.SetTracerProvider(tp)
	t.Cleanup(func() {
		otel.SetTracerProvider(before)
		if before == nil {
			otel.SetTracerProvider(noop.NewTracerProvider())
		}
		_ = tp.Shutdown(context.Background())
	})

	job := &store.Job{ID: "0190f0a0-0000-7000-8000-000000000001", Owner: "acme", Operation: "triage", Route: "default"}
	for i, msg := range []string{strings.Repeat("é", 100_000), strings.Repeat("m", 300) + "…"} {
		a := &store.Attempt{ID: "0190f0a0-0000-7000-8000-00000000000" + string(rune('2'+i)), Seq: i + 1, Role: "primary", Provider: "openai"}
		_, end := startAttemptSpan(context.Background(), job, a, &Target{Model: "gpt-test"}, "gpt-test")
		pe := &providers.Error{Provider: "openai", Kind: providers.KindStreamCut, Message: msg}
		end(attemptResult{state: store.AttemptFailed, err: pe})
	}
	spans := exp.GetSpans()
	if len(spans) != 2 {
		t.Fatalf("%d spans, want the attempts'", len(spans))
	}
	long, ordinary := spans[0].Status, spans[1].Status
	if long.Code != codes.Error || len(long.Description) > maxErrorStatus+len("…") || !strings.HasPrefix(long.Description, "provider openai: stream_cut: éé") ||
		!strings.HasSuffix(long.Description, "é…") {
		t.Errorf("a 200 KB error message gave a status of %d bytes: %.80q…", len(long.Description), long.Description)
	}
	if want := "provider openai: stream_cut: " + strings.Repeat("m", 300) + "…"; ordinary.Description != want {
		t.Errorf("an ordinary error's status %q, want it whole", ordinary.Description)
	}
}
