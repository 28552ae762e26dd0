package main

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/routerhq/router/conformance"
	"github.com/routerhq/router/internal/store"
	"github.com/routerhq/router/internal/testdb"
)

// `router serve` exports its traces with its own version (what `router
// version` prints first) as the resource's service.version, so a rolling
// update's traces can be told apart by build. It used to set none.
func TestServeTracesCarryTheBinarysVersion(t *testing.T) {
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
	cfg := serveConfig(t, db, "trace-version", "trace-version-key", `providers:
  - name: scripted
    type: scripted
routes:
  default:
    providers: [scripted]
`)
	ln, opsLn := listen(t), listen(t)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- serve(ctx, cfg, ln, opsLn, nil) }()
	// Answered once the router is ready: a request span to export.
	client := &http.Client{Timeout: time.Minute}
	resp, err := client.Get("http://" + ln.Addr().String() + "/v1/nothing-here")
	if err == nil {
		resp.Body.Close()
	}
	cancel()
	if serr := <-done; serr != nil { // flushes the spans as it shuts down
		t.Fatalf("serve: %v", serr)
	}
	if err != nil {
		t.Fatalf("request to the router: %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	all := strings.Join(bodies, "")
	if len(bodies) == 0 {
		t.Fatal("the collector got no export")
	}
	if !strings.Contains(all, "service.version") || !strings.Contains(all, conformance.Version()) {
		t.Fatalf("the traces' resource has no service.version %q", conformance.Version())
	}
}
