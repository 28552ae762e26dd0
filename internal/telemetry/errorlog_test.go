package telemetry

import (
	"bytes"
	"context"
	"errors"
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
)

// signalHandler is an slog handler that keeps its records' text and closes
// first on the first one (tests check it without waiting: what they expect
// is logged before the call that causes it returns).
type signalHandler struct {
	mu    sync.Mutex
	buf   bytes.Buffer
	inner slog.Handler
	first chan struct{}
	once  sync.Once
}

func newSignalHandler() *signalHandler {
	h := &signalHandler{first: make(chan struct{})}
	h.inner = slog.NewJSONHandler(&h.buf, nil)
	return h
}

func (h *signalHandler) Enabled(context.Context, slog.Level) bool { return true }
func (h *signalHandler) Handle(ctx context.Context, r slog.Record) error {
	h.mu.Lock()
	err := h.inner.Handle(ctx, r)
	h.mu.Unlock()
	h.once.Do(func() { close(h.first) })
	return err
}
func (h *signalHandler) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h *signalHandler) WithGroup(string) slog.Handler      { return h }
func (h *signalHandler) String() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.buf.String()
}

// resetGlobals puts OpenTelemetry's globals back when the test ends.
func resetGlobals(t *testing.T) {
	t.Helper()
	eh := otel.GetErrorHandler()
	t.Cleanup(func() {
		otel.SetTracerProvider(noop.NewTracerProvider())
		otel.SetTextMapPropagator(propagation.NewCompositeTextMapPropagator())
		otel.SetErrorHandler(eh)
	})
}

// A batch the collector refuses is logged on the router's log, as JSON when
// log.format is json; it went to OpenTelemetry's default handler, plain text
// on stderr, and the operator never heard traces were lost. Found by review.
func TestFailedExportsReachTheRoutersLog(t *testing.T) {
	collector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "no", http.StatusBadRequest) // not retried
	}))
	defer collector.Close()
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", collector.URL)
	t.Setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "")
	t.Setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf")
	resetGlobals(t)
	h := newSignalHandler()
	shutdown, enabled, err := SetupLogged(context.Background(), "v-test", slog.New(h))
	if err != nil || !enabled {
		t.Fatalf("enabled=%v err=%v", enabled, err)
	}
	_, span := otel.Tracer("test").Start(context.Background(), "s")
	span.End()
	// Shutdown exports the span; the failure is handled before it returns.
	if err := shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	select {
	case <-h.first:
	default:
		t.Fatal("the failed export did not reach the router's log")
	}
	got := h.String()
	if !strings.Contains(got, `"level":"WARN"`) || !strings.Contains(got, "traces may be lost") || !strings.Contains(got, "400") {
		t.Fatalf("the router's log: %q", got)
	}
}

// While tracing is on every OpenTelemetry error goes to the router's log
// (otel.Handle is what the SDK calls).
func TestSetupInstallsTheErrorHandler(t *testing.T) {
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:1")
	t.Setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "")
	t.Setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf")
	resetGlobals(t)
	h := newSignalHandler()
	shutdown, _, err := SetupLogged(context.Background(), "v-test", slog.New(h))
	if err != nil {
		t.Fatal(err)
	}
	otel.Handle(errors.New("exporter said no")) // synchronous
	select {
	case <-h.first:
	default:
		t.Fatal("otel.Handle did not reach the router's log")
	}
	if got := h.String(); !strings.Contains(got, "exporter said no") {
		t.Fatalf("the router's log: %q", got)
	}
	if err := shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// A dead collector fails every batch: one line a minute, counting the rest.
func TestExportErrorsAreRateLimited(t *testing.T) {
	var buf bytes.Buffer
	e := newErrorLog(slog.New(slog.NewTextHandler(&buf, nil)))
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	e.now = func() time.Time { return now }
	for range 5 {
		e.Handle(errors.New("refused"))
		now = now.Add(5 * time.Second)
	}
	if n := strings.Count(buf.String(), "traces may be lost"); n != 1 {
		t.Fatalf("%d lines for 5 errors within a minute: %q", n, buf.String())
	}
	now = now.Add(time.Minute)
	e.Handle(errors.New("refused again"))
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 2 || !strings.Contains(lines[1], "suppressed=4") || !strings.Contains(lines[1], "refused again") {
		t.Fatalf("after a minute: %q", lines)
	}
}
