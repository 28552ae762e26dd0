package race

import (
	"context"
	"testing"

	"go.opentelemetry.io/otel"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/store"
)

// An attempt whose record was not stored (its completion could not be
// written, and it was abandoned to its lease; or another transition kept its
// own record) reports no usage (attemptResult.usage zero), and
// router_cost_usd_total counts none: its span carries none either, though the
// provider's answer, put on the span as it came (recordResponse), had usage.
// Found by review.
func TestAttemptSpanOfAnUnstoredRecordHasNoUsage(t *testing.T) {
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
	for i, state := range []string{"abandoned", store.AttemptLost} {
		a := &store.Attempt{ID: "0190f0a0-0000-7000-8000-00000000000" + string(rune('2'+i)), Seq: i + 1, Role: "primary", Provider: "openai"}
		ctx, end := startAttemptSpan(context.Background(), job, a, &Target{Model: "gpt-test"}, "gpt-test")
		recordResponse(ctx, &providers.Response{Model: "gpt-test-1", ResponseID: "chatcmpl-1", FinishReason: "stop",
			Usage: providers.Usage{PromptTokens: 100, CompletionTokens: 50, TotalTokens: 150}})
		end(attemptResult{state: state}) // usage zero: nothing stored
	}
	spans := exp.GetSpans()
	if len(spans) != 2 {
		t.Fatalf("%d spans, want the attempts'", len(spans))
	}
	for _, s := range spans {
		got := map[string]any{}
		for _, kv := range s.Attributes {
			got[string(kv.Key)] = kv.Value.Emit()
		}
		for _, k := range []string{"gen_ai.usage.input_tokens", "gen_ai.usage.output_tokens", "router.usage.estimated"} {
			if v, ok := got[k]; ok {
				t.Errorf("span of an attempt (%v) whose record was not stored has %s = %v; it stored no usage", got["router.attempt.outcome"], k, v)
			}
		}
		if got["gen_ai.response.id"] != "chatcmpl-1" || got["gen_ai.response.model"] != "gpt-test-1" {
			t.Errorf("span lost the response's id and model: %v", got)
		}
	}
}
