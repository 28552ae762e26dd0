package server_test

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
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/routerhq/router/internal/server"
	"github.com/routerhq/router/internal/store"
	"github.com/routerhq/router/internal/testdb"
)

// The router's traces carry the binary's version (Options.Version, which
// `router serve` sets) as the resource's service.version, so a rolling
// update's traces can be told apart by build. Before, the server set up
// tracing with no version at all.
func TestTracesCarryTheRoutersVersion(t *testing.T) {
	var mu sync.Mutex
	var bodies []string
	collector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		bodies = append(bodies, string(b))
		mu.Unlock()
		w.Header().Set("Content-Type", "application/x-protobuf")
	}))
	defer collector.Close()
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", collector.URL)
	t.Setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf")
	t.Cleanup(func() {
		otel.SetTracerProvider(noop.NewTracerProvider())
		otel.SetTextMapPropagator(propagation.NewCompositeTextMapPropagator())
	})
	db := testdb.New(t, store.Options{})
	cfg := newConfig(t, db, newFakeLLM(t).srv.URL, "")
	const version = "v9.8.7-trace-version-test"
	srv, err := server.New(context.Background(), cfg, server.Options{Version: version})
	if err != nil {
		t.Fatal(err)
	}
	_, span := otel.Tracer("test").Start(context.Background(), "version-span")
	span.End()
	srv.Close() // flushes the spans
	mu.Lock()
	defer mu.Unlock()
	all := strings.Join(bodies, "")
	if !strings.Contains(all, "version-span") {
		t.Fatalf("the collector got no export with the test's span (%d exports)", len(bodies))
	}
	if !strings.Contains(all, "service.version") || !strings.Contains(all, version) {
		t.Fatalf("the traces' resource has no service.version %q", version)
	}
}
