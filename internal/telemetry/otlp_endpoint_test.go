package telemetry

import (
	"context"
	"log/slog"
	"strings"
	"testing"
)

// An endpoint written as host:port, without http:// or https:// (the form
// many collectors' own documentation and gRPC tools use), is taken by the
// exporter for a URL of scheme "collector.internal" and no host ("https:///v1/traces:
// no Host in request URL"), or, for an IP address, fails to parse and is
// replaced by the default localhost:4318 — spans sent to another machine
// than the one configured. The router reported "exporting OpenTelemetry
// traces" and lost every span; it refuses this at start now, as an unknown
// protocol or propagator, naming the variable and the fix. Found by review.
func TestOTLPEndpointWithoutSchemeIsRefused(t *testing.T) {
	for _, c := range []struct{ key, value string }{
		{"OTEL_EXPORTER_OTLP_ENDPOINT", "collector.internal:4318"},
		{"OTEL_EXPORTER_OTLP_ENDPOINT", "10.0.0.5:4318"},
		{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "collector.internal:4318"},
	} {
		t.Run(c.key+"="+c.value, func(t *testing.T) {
			t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "")
			t.Setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "")
			t.Setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf")
			t.Setenv(c.key, c.value)
			resetGlobals(t)
			shutdown, enabled, err := SetupLogged(context.Background(), "v-test", slog.New(newSignalHandler()))
			if err == nil {
				_ = shutdown(context.Background())
				t.Fatalf("%s=%s accepted (tracing enabled=%v): every span is lost", c.key, c.value, enabled)
			}
			if !strings.Contains(err.Error(), c.key) || !strings.Contains(err.Error(), "http://") {
				t.Errorf("the refusal does not name %s and the fix (http://…): %v", c.key, err)
			}
		})
	}
}
