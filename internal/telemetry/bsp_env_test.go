package telemetry

import (
	"bytes"
	"context"
	"log"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace/noop"
)

// SPEC §18 names OTEL_BSP_SCHEDULE_DELAY. Written as a duration ("5s"), the
// SDK cannot read it (milliseconds expected), keeps its default and says so
// only at Info on OpenTelemetry's internal logger, silent by default: the
// router, which warns of an unreadable value length limit, says nothing.
func TestUnreadableBSPScheduleDelayIsOnTheRoutersLog(t *testing.T) {
	collector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/x-protobuf")
	}))
	defer collector.Close()
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", collector.URL)
	t.Setenv("OTEL_BSP_SCHEDULE_DELAY", "5s")
	t.Cleanup(func() {
		otel.SetTracerProvider(noop.NewTracerProvider())
		otel.SetTextMapPropagator(propagation.NewCompositeTextMapPropagator())
	})
	var stdlog bytes.Buffer
	orig := log.Writer()
	log.SetOutput(&stdlog)
	defer log.SetOutput(orig)
	var routerLog bytes.Buffer
	shutdown, enabled, err := SetupLogged(context.Background(), "v-test", slog.New(slog.NewJSONHandler(&routerLog, nil)))
	if err != nil || !enabled {
		t.Fatalf("enabled=%v err=%v", enabled, err)
	}
	_ = shutdown(context.Background())
	t.Logf("standard library log: %q; router log: %q; CheckEnv: %v", stdlog.String(), routerLog.String(), CheckEnv(os.Getenv))
	if !strings.Contains(routerLog.String(), "OTEL_BSP_SCHEDULE_DELAY") {
		t.Errorf("an unreadable OTEL_BSP_SCHEDULE_DELAY is ignored without a word on the router's log")
	}
}
