package telemetry

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace/noop"
	coltrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/protobuf/proto"
)

// docs/providers.md (traces): "A failed export (a collector that is down,
// refuses a batch or cannot be reached) and any other OpenTelemetry error is
// logged on the router's log at warn level … as `OpenTelemetry: traces may be
// lost …`". Spans are lost another way the router never tells of: the batch
// span processor (default queue 2,048 spans, batches of 512) drops every
// span that ends while its queue is full — a burst of jobs, or a collector
// that answers slowly — and OpenTelemetry reports that only at Debug on its
// internal logger (silent by default), not to the error handler. Here a
// collector that takes 300 ms per batch, every export succeeding, receives a
// fraction of a burst of 5,000 spans (about 1,250 jobs' request, job and
// attempt spans); the router's log stays empty and no metric counts them.
func TestSpansDroppedOnAFullQueueAreOnTheRoutersLog_wtel63(t *testing.T) {
	var mu sync.Mutex
	received := 0
	collector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var req coltrace.ExportTraceServiceRequest
		if err := proto.Unmarshal(body, &req); err == nil {
			n := 0
			for _, rs := range req.ResourceSpans {
				for _, ss := range rs.ScopeSpans {
					n += len(ss.Spans)
				}
			}
			mu.Lock()
			received += n
			mu.Unlock()
		}
		time.Sleep(300 * time.Millisecond) // a collector under load: slow, but it takes every batch
		w.Header().Set("Content-Type", "application/x-protobuf")
	}))
	defer collector.Close()
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", collector.URL)
	t.Setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf")
	t.Cleanup(func() {
		otel.SetTracerProvider(noop.NewTracerProvider())
		otel.SetTextMapPropagator(propagation.NewCompositeTextMapPropagator())
	})
	var routerLog bytes.Buffer
	var logMu sync.Mutex
	logger := slog.New(slog.NewJSONHandler(writerFunc(func(p []byte) (int, error) {
		logMu.Lock()
		defer logMu.Unlock()
		return routerLog.Write(p)
	}), nil))
	shutdown, enabled, err := SetupLogged(context.Background(), "v-test", logger)
	if err != nil || !enabled {
		t.Fatalf("enabled=%v err=%v", enabled, err)
	}
	const spans = 5000
	for i := 0; i < spans; i++ {
		_, span := otel.Tracer("test").Start(context.Background(), "router.job triage")
		span.End()
	}
	sctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := shutdown(sctx); err != nil {
		t.Logf("shutdown: %v", err)
	}
	mu.Lock()
	got := received
	mu.Unlock()
	logMu.Lock()
	logged := routerLog.String()
	logMu.Unlock()
	t.Logf("ended %d sampled spans; the collector received %d; router log: %q", spans, got, logged)
	if got < spans && !strings.Contains(logged, "lost") && !strings.Contains(logged, "dropped") {
		t.Errorf("%d of %d spans were dropped (the batch span processor's queue was full) and the router's log says nothing", spans-got, spans)
	}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }
