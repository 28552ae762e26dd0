package telemetry

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"
)

// A caller-sized attribute (a request span's url.path can be ~1 MB, sent
// before authentication) is truncated before it is kept and exported.
func TestSetupBoundsAttributeValues(t *testing.T) {
	var mu sync.Mutex
	var exported int
	var body string
	collector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		exported += len(b)
		body += string(b)
		mu.Unlock()
		w.Header().Set("Content-Type", "application/x-protobuf")
	}))
	defer collector.Close()
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", collector.URL)
	t.Setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf")
	t.Setenv("OTEL_SPAN_ATTRIBUTE_VALUE_LENGTH_LIMIT", "")
	t.Setenv("OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT", "")
	t.Cleanup(func() {
		otel.SetTracerProvider(noop.NewTracerProvider())
		otel.SetTextMapPropagator(propagation.NewCompositeTextMapPropagator())
	})
	shutdown, enabled, err := Setup(context.Background(), "v-test")
	if err != nil || !enabled {
		t.Fatalf("enabled=%v err=%v", enabled, err)
	}
	path := "/" + strings.Repeat("a", 1<<20)
	_, span := otel.Tracer("test").Start(context.Background(), "GET /", trace.WithAttributes(attribute.String("url.path", path)))
	span.SetAttributes(attribute.String("late", path))
	span.End()
	if err := shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if exported == 0 || !strings.Contains(body, path[:DefaultAttributeValueLengthLimit]) {
		t.Fatalf("the span was not exported with its truncated attribute (%d bytes)", exported)
	}
	if exported > 4*DefaultAttributeValueLengthLimit {
		t.Fatalf("exported %d bytes for a span with two 1 MiB attributes: attribute values are not bounded", exported)
	}
}

// The standard variables still decide when set (-1: no limit).
func TestSpanLimitsHonourTheEnvironment(t *testing.T) {
	if got := SpanLimits(env(map[string]string{})).AttributeValueLengthLimit; got != DefaultAttributeValueLengthLimit {
		t.Errorf("default limit %d", got)
	}
	t.Setenv("OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT", "-1")
	if got := SpanLimits(env(map[string]string{"OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT": "-1"})).AttributeValueLengthLimit; got != -1 {
		t.Errorf("OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT=-1 gave %d", got)
	}
	t.Setenv("OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT", "")
	t.Setenv("OTEL_SPAN_ATTRIBUTE_VALUE_LENGTH_LIMIT", "100")
	if got := SpanLimits(env(map[string]string{"OTEL_SPAN_ATTRIBUTE_VALUE_LENGTH_LIMIT": "100"})).AttributeValueLengthLimit; got != 100 {
		t.Errorf("OTEL_SPAN_ATTRIBUTE_VALUE_LENGTH_LIMIT=100 gave %d", got)
	}
}
