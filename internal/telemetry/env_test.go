package telemetry

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
)

// An unreadable value length limit ("4k") keeps the router's bound: the SDK
// read it as no limit at all. Found by review.
func TestAnUnreadableLengthLimitKeepsTheBound(t *testing.T) {
	t.Setenv("OTEL_SPAN_ATTRIBUTE_VALUE_LENGTH_LIMIT", "4k")
	t.Setenv("OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT", "")
	if got := SpanLimits(os.Getenv).AttributeValueLengthLimit; got != DefaultAttributeValueLengthLimit {
		t.Fatalf("OTEL_SPAN_ATTRIBUTE_VALUE_LENGTH_LIMIT=4k gave %d, want %d", got, DefaultAttributeValueLengthLimit)
	}
	// The next variable decides when the first is unreadable.
	if got := SpanLimits(env(map[string]string{"OTEL_SPAN_ATTRIBUTE_VALUE_LENGTH_LIMIT": "4k", "OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT": "100"})).AttributeValueLengthLimit; got != 100 {
		t.Errorf("OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT=100 after an unreadable one gave %d", got)
	}
	if got := SpanLimits(env(map[string]string{"OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT": " -1 "})).AttributeValueLengthLimit; got != -1 {
		t.Errorf("OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT=-1 gave %d", got)
	}
	// And the start says so.
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:1")
	t.Setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "")
	t.Setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf")
	resetGlobals(t)
	h := newSignalHandler()
	shutdown, _, err := SetupLogged(context.Background(), "v-test", slog.New(h))
	if err != nil {
		t.Fatal(err)
	}
	if err := shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := h.String(); !strings.Contains(got, "OTEL_SPAN_ATTRIBUTE_VALUE_LENGTH_LIMIT is not an integer") || !strings.Contains(got, `"value":"4k"`) {
		t.Errorf("no warning: %q", got)
	}
}

// OTEL_EXPORTER_OTLP_PROTOCOL is an enum: case and spaces are ignored, as
// the OpenTelemetry specification says; "GRPC" stopped the router. Found by
// review.
func TestProtocolIgnoresCase(t *testing.T) {
	for in, want := range map[string]string{"GRPC": "grpc", " Http/Protobuf ": "http/protobuf"} {
		if got, err := Protocol(env(map[string]string{"OTEL_EXPORTER_OTLP_PROTOCOL": in})); err != nil || got != want {
			t.Errorf("Protocol(%q) = %q, %v", in, got, err)
		}
	}
	if got, err := Protocol(env(map[string]string{"OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": "gRPC"})); err != nil || got != "grpc" {
		t.Errorf("traces Protocol(gRPC) = %q, %v", got, err)
	}
	_, err := Protocol(env(map[string]string{"OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": "http/json"}))
	if err == nil || !strings.Contains(err.Error(), "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL") {
		t.Errorf("http/json in the traces variable: %v", err)
	}
	if Enabled(env(map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318", "OTEL_TRACES_EXPORTER": " None "})) {
		t.Error("OTEL_TRACES_EXPORTER=' None ' left tracing on")
	}
}

// An http/protobuf OTEL_EXPORTER_OTLP_TRACES_ENDPOINT without a path sends
// every batch to "/": the start says so.
func TestSetupWarnsOfATracesEndpointWithoutPath(t *testing.T) {
	collector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/x-protobuf")
	}))
	defer collector.Close()
	for _, c := range []struct {
		endpoint, proto string
		warn            bool
	}{
		{collector.URL, "http/protobuf", true},
		{collector.URL + "/", "", true},
		{collector.URL + "/v1/traces", "http/protobuf", false},
		{collector.URL, "grpc", false},
	} {
		t.Run(c.endpoint+" "+c.proto, func(t *testing.T) {
			t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "")
			t.Setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", c.endpoint)
			t.Setenv("OTEL_EXPORTER_OTLP_PROTOCOL", c.proto)
			resetGlobals(t)
			h := newSignalHandler()
			shutdown, enabled, err := SetupLogged(context.Background(), "v-test", slog.New(h))
			if err != nil || !enabled {
				t.Fatalf("enabled=%v err=%v", enabled, err)
			}
			// Nothing is exported: the log holds only what the start said.
			if err := shutdown(context.Background()); err != nil {
				t.Fatal(err)
			}
			if got := strings.Contains(h.String(), "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT has no path"); got != c.warn {
				t.Errorf("warned %v, want %v: %q", got, c.warn, h.String())
			}
		})
	}
}
