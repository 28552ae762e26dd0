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
	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace/noop"
)

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func TestEnabledAndProtocol(t *testing.T) {
	for _, c := range []struct {
		env  map[string]string
		want bool
	}{
		{map[string]string{}, false},
		{map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318"}, true},
		{map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://collector:4318/v1/traces"}, true},
		{map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318", "OTEL_SDK_DISABLED": "true"}, false},
		{map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318", "OTEL_TRACES_EXPORTER": "none"}, false},
	} {
		if got := Enabled(env(c.env)); got != c.want {
			t.Errorf("Enabled(%v) = %v", c.env, got)
		}
	}
	for in, want := range map[string]string{"": "http/protobuf", "http/protobuf": "http/protobuf", "grpc": "grpc"} {
		if got, err := Protocol(env(map[string]string{"OTEL_EXPORTER_OTLP_PROTOCOL": in})); err != nil || got != want {
			t.Errorf("Protocol(%q) = %q, %v", in, got, err)
		}
	}
	if got, _ := Protocol(env(map[string]string{"OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": "grpc"})); got != "grpc" {
		t.Errorf("the traces-specific protocol does not win: %q", got)
	}
	if _, err := Protocol(env(map[string]string{"OTEL_EXPORTER_OTLP_PROTOCOL": "http/json"})); err == nil {
		t.Error("http/json accepted")
	}
}

// With tracing off, Setup installs the no-op provider and Off says so, so
// that span makers skip their spans; a provider installed later (an SDK's)
// turns Off back to false.
func TestSetupOffInstallsTheNoopProvider(t *testing.T) {
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "")
	t.Setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "")
	before := otel.GetTracerProvider()
	t.Cleanup(func() { otel.SetTracerProvider(before) })
	shutdown, enabled, err := Setup(context.Background(), "test")
	if err != nil || enabled {
		t.Fatalf("enabled=%v err=%v", enabled, err)
	}
	if _, ok := otel.GetTracerProvider().(noop.TracerProvider); !ok || !Off() {
		t.Fatalf("with tracing off the global provider is %T (Off %v), not the no-op", otel.GetTracerProvider(), Off())
	}
	if err := shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	tp := sdktrace.NewTracerProvider()
	defer func() { _ = tp.Shutdown(context.Background()) }()
	Install(tp)
	t.Cleanup(func() { otel.SetTextMapPropagator(propagation.NewCompositeTextMapPropagator()) })
	if Off() {
		t.Fatal("Off with an SDK provider installed")
	}
}

// With an OTLP endpoint set, spans reach it over http/protobuf, named by
// OTEL_SERVICE_NAME.
func TestSetupExportsOverOTLPHTTP(t *testing.T) {
	var mu sync.Mutex
	var bodies [][]byte
	var paths []string
	collector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		bodies, paths = append(bodies, b), append(paths, r.URL.Path+" "+r.Header.Get("Content-Type"))
		mu.Unlock()
		w.Header().Set("Content-Type", "application/x-protobuf")
	}))
	defer collector.Close()
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", collector.URL)
	t.Setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf")
	t.Setenv("OTEL_SERVICE_NAME", "router-under-test")
	t.Setenv("OTEL_BSP_SCHEDULE_DELAY", "10")
	t.Cleanup(func() {
		otel.SetTracerProvider(noop.NewTracerProvider())
		otel.SetTextMapPropagator(propagation.NewCompositeTextMapPropagator())
	})
	shutdown, enabled, err := Setup(context.Background(), "v-test")
	if err != nil || !enabled {
		t.Fatalf("enabled=%v err=%v", enabled, err)
	}
	_, span := otel.Tracer("test").Start(context.Background(), "exported-span")
	span.End()
	if err := shutdown(context.Background()); err != nil { // flushes
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(bodies) == 0 || paths[0] != "/v1/traces application/x-protobuf" {
		t.Fatalf("collector got %v", paths)
	}
	all := string(bodies[0])
	for _, want := range []string{"exported-span", "router-under-test", "v-test"} {
		if !strings.Contains(all, want) {
			t.Errorf("export lacks %q", want)
		}
	}
}
