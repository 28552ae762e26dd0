package telemetry

import (
	"bytes"
	"context"
	"log"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace/noop"
)

// docs/providers.md (traces): "A failed export … and any other OpenTelemetry
// error is logged on the router's log at warn level, in its log.format, as
// `OpenTelemetry: traces may be lost …`", and sampling is set with
// OTEL_TRACES_SAMPLER / OTEL_TRACES_SAMPLER_ARG. An argument the SDK cannot
// read ("10%" for 0.1) makes the SDK sample every trace (TraceIDRatioBased(1.0),
// not even parent-based), and its error is handled while the tracer provider
// is built — before SetupLogged installs the router's error handler — so it
// goes to the standard library's logger (plain text on stderr) and the
// router's log says nothing. An operator who asked for a tenth of the traces
// exports all of them, told only by a line outside the router's log format.
func TestUnreadableSamplerArgIsOnTheRoutersLog(t *testing.T) {
	collector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/x-protobuf")
	}))
	defer collector.Close()
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", collector.URL)
	t.Setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf")
	t.Setenv("OTEL_TRACES_SAMPLER", "traceidratio")
	t.Setenv("OTEL_TRACES_SAMPLER_ARG", "10%")
	t.Cleanup(func() {
		otel.SetTracerProvider(noop.NewTracerProvider())
		otel.SetTextMapPropagator(propagation.NewCompositeTextMapPropagator())
	})
	var stdlog bytes.Buffer
	orig := log.Writer()
	log.SetOutput(&stdlog)
	defer log.SetOutput(orig)
	var routerLog bytes.Buffer
	logger := slog.New(slog.NewJSONHandler(&routerLog, nil))
	shutdown, enabled, err := SetupLogged(context.Background(), "v-test", logger)
	if err != nil || !enabled {
		t.Fatalf("enabled=%v err=%v", enabled, err)
	}
	sampled := 0
	for i := 0; i < 1000; i++ {
		_, span := otel.Tracer("test").Start(context.Background(), "root")
		if span.SpanContext().IsSampled() {
			sampled++
		}
		span.End()
	}
	_ = shutdown(context.Background())
	t.Logf("sampled %d of 1000 root spans with OTEL_TRACES_SAMPLER=traceidratio OTEL_TRACES_SAMPLER_ARG=10%%", sampled)
	t.Logf("standard library log (stderr, plain text): %q", stdlog.String())
	t.Logf("router log: %q", routerLog.String())
	if !strings.Contains(routerLog.String(), "SAMPLER") && !strings.Contains(strings.ToLower(routerLog.String()), "sampler") {
		t.Errorf("an OTEL_TRACES_SAMPLER_ARG the SDK cannot read (every trace is sampled instead of a tenth) is not on the router's log")
	}
	if stdlog.Len() != 0 {
		t.Errorf("OpenTelemetry's error while the tracer provider was built went to the standard library's logger, not the router's: %q", stdlog.String())
	}
}
