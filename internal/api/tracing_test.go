package api_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/telemetry"
)

// installTestTracing records every span in memory until the test ends.
func installTestTracing(t *testing.T) *tracetest.InMemoryExporter {
	t.Helper()
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	telemetry.Install(tp)
	t.Cleanup(func() {
		otel.SetTracerProvider(noop.NewTracerProvider())
		otel.SetTextMapPropagator(propagation.NewCompositeTextMapPropagator())
		_ = tp.Shutdown(context.Background())
	})
	return exp
}

func attrs(s tracetest.SpanStub) map[attribute.Key]attribute.Value {
	m := map[attribute.Key]attribute.Value{}
	for _, kv := range s.Attributes {
		m[kv.Key] = kv.Value
	}
	return m
}

// SPEC §18: the span tree of a hedged job: the request's server span continues
// the caller's traceparent; the job's span is its child; each attempt's span is
// the job's child, with the GenAI attributes and the router's own.
func TestTraceOfHedgedJob(t *testing.T) {
	exp := installTestTracing(t)
	b := setup(t, options{
		hedgeAfter: 10 * time.Millisecond,
		respond:    func(int, *providers.Request) providers.Step { return providers.Step{Hang: true} },
		fallback: func(int, *providers.Request) providers.Step {
			return providers.Step{Output: "hedged answer", Usage: &providers.Usage{PromptTokens: 12, CompletionTokens: 3, TotalTokens: 15}}
		},
	})
	const traceID, parentID = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
	rep := b.do(t, "POST", "/v1/chat/completions", acmeKey, `{"model":"default","messages":[{"role":"user","content":"hi"}]}`,
		"traceparent", "00-"+traceID+"-"+parentID+"-01", "X-Request-Id", "req-trace-1")
	if rep.status != 200 || rep.header.Get("X-Request-Id") != "req-trace-1" {
		t.Fatalf("status %d request id %q: %s", rep.status, rep.header.Get("X-Request-Id"), rep.raw)
	}
	jobID := rep.header.Get("X-Router-Job-Id")
	// Every span has ended once the server and the runner have stopped.
	b.srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	b.runner.Stop(ctx)

	var request, job *tracetest.SpanStub
	var attempts []tracetest.SpanStub
	spans := exp.GetSpans()
	for i := range spans {
		s := &spans[i]
		switch {
		case s.SpanKind == trace.SpanKindServer:
			request = s
		case strings.HasPrefix(s.Name, "router.job"):
			job = s
		case strings.HasPrefix(s.Name, "chat "):
			attempts = append(attempts, *s)
		}
	}
	if request == nil || job == nil || len(attempts) != 2 {
		t.Fatalf("spans: %d (request %v, job %v, attempts %d)", len(spans), request != nil, job != nil, len(attempts))
	}
	if request.SpanContext.TraceID().String() != traceID || request.Parent.SpanID().String() != parentID || !request.Parent.IsRemote() {
		t.Fatalf("request span does not continue the caller's trace: trace %s parent %s", request.SpanContext.TraceID(), request.Parent.SpanID())
	}
	if request.Name != "POST /v1/chat/completions" || attrs(*request)["router.request.id"].AsString() != "req-trace-1" ||
		attrs(*request)["http.response.status_code"].AsInt64() != 200 {
		t.Fatalf("request span %s %v", request.Name, request.Attributes)
	}
	if job.Parent.SpanID() != request.SpanContext.SpanID() || job.SpanContext.TraceID() != request.SpanContext.TraceID() {
		t.Fatal("the job's span is not the request's child")
	}
	if a := attrs(*job); a["router.job.id"].AsString() != jobID || a["router.job.state"].AsString() != "succeeded" {
		t.Fatalf("job span attributes %v (job %s)", job.Attributes, jobID)
	}
	byRole := map[string]map[attribute.Key]attribute.Value{}
	for _, s := range attempts {
		if s.Parent.SpanID() != job.SpanContext.SpanID() {
			t.Fatalf("attempt span %s is not the job's child", s.Name)
		}
		a := attrs(s)
		if a["gen_ai.operation.name"].AsString() != "chat" || a["gen_ai.provider.name"].AsString() != "scripted" ||
			a["router.job.id"].AsString() != jobID || s.SpanKind != trace.SpanKindClient {
			t.Fatalf("attempt span %s %v", s.Name, s.Attributes)
		}
		byRole[a["router.attempt.role"].AsString()] = a
	}
	primary, hedge := byRole["primary"], byRole["hedge"]
	if primary == nil || hedge == nil {
		t.Fatalf("attempt roles %v", byRole)
	}
	if hedge["router.attempt.outcome"].AsString() != "won" || !hedge["router.attempt.won"].AsBool() ||
		hedge["router.provider"].AsString() != "fallback" || hedge["gen_ai.request.model"].AsString() != "m2" ||
		hedge["gen_ai.response.model"].AsString() != "m2" || hedge["gen_ai.usage.input_tokens"].AsInt64() != 12 ||
		hedge["gen_ai.usage.output_tokens"].AsInt64() != 3 {
		t.Fatalf("hedge span %v", hedge)
	}
	if primary["router.attempt.outcome"].AsString() != "cancelled" || primary["router.attempt.won"].AsBool() ||
		primary["router.provider"].AsString() != "primary" || primary["error.type"].AsString() != "cancelled" {
		t.Fatalf("primary span %v", primary)
	}
}

// Request ids: an unusable X-Request-Id is replaced; problem+json carries it.
func TestRequestIDInProblems(t *testing.T) {
	b := setup(t, options{})
	rep := b.do(t, "GET", "/v1/jobs/00000000-0000-0000-0000-000000000000", acmeKey, "", "X-Request-Id", "bad id with spaces")
	rid := rep.header.Get("X-Request-Id")
	if rep.status != http.StatusNotFound || rid == "" || rid == "bad id with spaces" {
		t.Fatalf("status %d request id %q", rep.status, rid)
	}
	if rep.body["request_id"] != rid {
		t.Fatalf("problem %s lacks request_id %s", rep.raw, rid)
	}
}
