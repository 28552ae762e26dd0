package race

import (
	"context"
	"testing"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/store"
)

// An attempt that failed on an answer the provider billed (a refusal, a
// paused turn) carries the answer's usage, model and id on its span, as an
// answered attempt does: a trace shows what failing over cost.
func TestAttemptSpanCarriesBilledFailureUsage(t *testing.T) {
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
	a := &store.Attempt{ID: "0190f0a0-0000-7000-8000-000000000002", Seq: 1, Role: "primary", Provider: "anthropic"}
	_, end := startAttemptSpan(context.Background(), job, a, &Target{Model: "claude-test"}, "claude-test")
	pe := &providers.Error{Provider: "anthropic", Kind: providers.KindEmptyResponse, Code: "pause_turn", Message: "paused",
		Usage: &providers.Usage{PromptTokens: 1000, CompletionTokens: 500, TotalTokens: 1500}, ResponseID: "msg_1", ResponseModel: "claude-paused-1"}
	// The billed usage as runAttempt stores it and reports it (res.usage).
	end(attemptResult{state: store.AttemptFailed, err: pe, usage: *pe.Usage})

	spans := exp.GetSpans()
	if len(spans) != 1 {
		t.Fatalf("%d spans, want the attempt's", len(spans))
	}
	got := map[attribute.Key]attribute.Value{}
	for _, kv := range spans[0].Attributes {
		got[kv.Key] = kv.Value
	}
	for k, want := range map[attribute.Key]attribute.Value{
		"gen_ai.usage.input_tokens":  attribute.IntValue(1000),
		"gen_ai.usage.output_tokens": attribute.IntValue(500),
		"gen_ai.response.model":      attribute.StringValue("claude-paused-1"),
		"gen_ai.response.id":         attribute.StringValue("msg_1"),
	} {
		if got[k] != want {
			t.Errorf("span attribute %s = %v, want %v", k, got[k].Emit(), want.Emit())
		}
	}
}
