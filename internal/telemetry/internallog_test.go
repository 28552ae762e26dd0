package telemetry

import (
	"bytes"
	"context"
	"log"
	"log/slog"
	"os"
	"strings"
	"testing"

	"github.com/go-logr/stdr"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace/noop"
)

// What the OTLP exporter reports on OpenTelemetry's internal logger while
// SetupLogged builds it (a timeout it cannot parse: "parse duration") is on
// the router's log, in its format, not on stderr as plain text.
func TestInternalLoggerErrorsAreOnTheRoutersLog(t *testing.T) {
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:4318")
	t.Setenv("OTEL_EXPORTER_OTLP_TRACES_TIMEOUT", "2s")
	t.Cleanup(func() {
		otel.SetTracerProvider(noop.NewTracerProvider())
		otel.SetTextMapPropagator(propagation.NewCompositeTextMapPropagator())
		otel.SetLogger(stdr.New(log.New(os.Stderr, "", log.LstdFlags|log.Lshortfile)))
	})
	var routerLog bytes.Buffer
	shutdown, enabled, err := SetupLogged(context.Background(), "v-test", slog.New(slog.NewJSONHandler(&routerLog, nil)))
	if err != nil || !enabled {
		t.Fatalf("enabled=%v err=%v", enabled, err)
	}
	sctx, cancel := context.WithCancel(context.Background())
	cancel()
	_ = shutdown(sctx)
	if !strings.Contains(routerLog.String(), `parse duration (input=2s): strconv.Atoi`) {
		t.Errorf("the exporter's own error is not on the router's log: %s", routerLog.String())
	}
}
