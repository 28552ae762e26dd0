package telemetry

import (
	"context"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace/noop"
)

// setupTracing runs Setup against a collector that accepts everything, with
// OTEL_PROPAGATORS set to propagators ("" unset), and undoes what it installed
// when the test ends.
func setupTracing(t *testing.T, propagators string) error {
	t.Helper()
	collector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/x-protobuf")
	}))
	t.Cleanup(collector.Close)
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", collector.URL)
	t.Setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf")
	t.Setenv("OTEL_PROPAGATORS", propagators)
	otel.SetTextMapPropagator(propagation.NewCompositeTextMapPropagator())
	t.Cleanup(func() {
		otel.SetTracerProvider(noop.NewTracerProvider())
		otel.SetTextMapPropagator(propagation.NewCompositeTextMapPropagator())
	})
	shutdown, enabled, err := Setup(context.Background(), "v-test")
	if err != nil {
		return err
	}
	if !enabled {
		t.Fatal("tracing not enabled with an OTLP endpoint")
	}
	t.Cleanup(func() { _ = shutdown(context.Background()) })
	return nil
}

// injected is what the global propagator writes into an outbound call's
// headers from a sampled span's context.
func injected(t *testing.T) http.Header {
	t.Helper()
	tp := sdktrace.NewTracerProvider()
	defer func() { _ = tp.Shutdown(context.Background()) }()
	ctx, span := tp.Tracer("test").Start(context.Background(), "attempt")
	defer span.End()
	h := http.Header{}
	otel.GetTextMapPropagator().Inject(ctx, propagation.HeaderCarrier(h))
	return h
}

// OTEL_PROPAGATORS decides what the router reads from callers and writes to
// providers (it was ignored: tracecontext and baggage always). Found by
// review.
func TestSetupHonoursOTELPropagators(t *testing.T) {
	for _, c := range []struct {
		env    string
		fields []string
	}{
		{"", []string{"baggage", "traceparent", "tracestate"}}, // the default, unchanged
		{"none", nil},
		{"tracecontext", []string{"traceparent", "tracestate"}},
		{" TraceContext , baggage ", []string{"baggage", "traceparent", "tracestate"}},
		{"tracecontext,none", nil},
		{"b3", []string{"b3"}},
		{"b3multi", []string{"x-b3-flags", "x-b3-sampled", "x-b3-spanid", "x-b3-traceid"}},
	} {
		t.Run(c.env, func(t *testing.T) {
			if err := setupTracing(t, c.env); err != nil {
				t.Fatal(err)
			}
			fields := otel.GetTextMapPropagator().Fields()
			slices.Sort(fields)
			if !slices.Equal(fields, c.fields) {
				t.Errorf("OTEL_PROPAGATORS=%q: the propagator's fields are %v, want %v", c.env, fields, c.fields)
			}
			h := injected(t)
			if got := h.Get("traceparent") != ""; got != slices.Contains(c.fields, "traceparent") {
				t.Errorf("OTEL_PROPAGATORS=%q: an outbound call's headers %v", c.env, h)
			}
			if c.env == "none" && len(h) != 0 {
				t.Errorf("OTEL_PROPAGATORS=none: an outbound call carries %v", h)
			}
		})
	}
}

// A name OTEL_PROPAGATORS does not know refuses the start and says what it
// takes: a typo neither turns propagation off nor back to the default.
func TestSetupRefusesAnUnknownPropagator(t *testing.T) {
	err := setupTracing(t, "tracecontext,w3c")
	if err == nil || !strings.Contains(err.Error(), `OTEL_PROPAGATORS "tracecontext,w3c"`) || !strings.Contains(err.Error(), "w3c") ||
		!strings.Contains(err.Error(), "b3multi") {
		t.Fatalf("Setup: %v", err)
	}
	if _, err := Propagator(env(map[string]string{"OTEL_PROPAGATORS": "xray,jaeger,ottrace"})); err != nil {
		t.Errorf("known propagators refused: %v", err)
	}
}
