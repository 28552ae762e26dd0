package telemetry

import (
	"bytes"
	"context"
	"log"
	"log/slog"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/go-logr/logr/funcr"
	"github.com/go-logr/stdr"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace/noop"
)

// docs/providers.md (traces): "any error OpenTelemetry reports while tracing
// is set up is on the router's log too, not on stderr", and "any other
// OpenTelemetry error is logged on the router's log at warn level, in its
// log.format". The OTLP exporter reads its own variables while SetupLogged
// builds it, and reports what it cannot use through OpenTelemetry's global
// logger (envconfig: global.Error), not its error handler: a CA file that
// cannot be read (OTEL_EXPORTER_OTLP_CERTIFICATE, a wrong mount path) and a
// timeout written as a duration (OTEL_EXPORTER_OTLP_TIMEOUT=30s, the SDK
// wants milliseconds) are then dropped — the exporter trusts the system's
// roots only, so every export to a collector of a private CA fails, and keeps
// its 10 s timeout — with a plain-text line on stderr only. The router's log,
// and `router config check` (CheckEnv), say nothing.
func TestExporterEnvErrorsAreOnTheRoutersLog(t *testing.T) {
	// Adapted from the rmaint14 proof: a CA file the exporter cannot read is
	// refused (serve does not start, config check fails, naming the
	// variable); a timeout it cannot read is warned of on the router's log.
	for _, c := range []struct {
		name, key, value string
		refused          bool
	}{
		{"unreadable CA file", "OTEL_EXPORTER_OTLP_CERTIFICATE", "/nonexistent/collector-ca.pem", true},
		{"timeout as a duration", "OTEL_EXPORTER_OTLP_TIMEOUT", "30s", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "https://127.0.0.1:4318")
			t.Setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf")
			t.Setenv(c.key, c.value)
			t.Cleanup(func() {
				otel.SetTracerProvider(noop.NewTracerProvider())
				otel.SetTextMapPropagator(propagation.NewCompositeTextMapPropagator())
			})
			// OpenTelemetry's global logger (stderr by default), captured.
			var mu sync.Mutex
			var internal strings.Builder
			otel.SetLogger(funcr.New(func(prefix, args string) {
				mu.Lock()
				defer mu.Unlock()
				internal.WriteString(prefix + " " + args + "\n")
			}, funcr.Options{}))
			t.Cleanup(func() { otel.SetLogger(stdr.New(log.New(os.Stderr, "", log.LstdFlags|log.Lshortfile))) })
			var routerLog bytes.Buffer
			shutdown, enabled, err := SetupLogged(context.Background(), "v-test", slog.New(slog.NewJSONHandler(&routerLog, nil)))
			if c.refused {
				checkErr := CheckEnv(os.Getenv)
				if err == nil || !strings.Contains(err.Error(), c.key) || checkErr == nil || !strings.Contains(checkErr.Error(), c.key) {
					if err == nil {
						_ = shutdown(context.Background())
					}
					t.Fatalf("%s=%s, which the exporter cannot use and drops, is not refused naming it: SetupLogged: %v; CheckEnv: %v", c.key, c.value, err, checkErr)
				}
				return
			}
			if err != nil || !enabled {
				t.Fatalf("enabled=%v err=%v", enabled, err)
			}
			sctx, cancel := context.WithCancel(context.Background())
			cancel()
			_ = shutdown(sctx)
			mu.Lock()
			got := internal.String()
			mu.Unlock()
			t.Logf("OpenTelemetry's global logger (stderr by default): %q", got)
			t.Logf("router log: %q", routerLog.String())
			t.Logf("CheckEnv: %v; EnvWarnings: %v", CheckEnv(os.Getenv), EnvWarnings(context.Background()))
			if !strings.Contains(routerLog.String(), c.key) {
				t.Errorf("%s=%s, which the exporter cannot use and drops, is not on the router's log", c.key, c.value)
			}
		})
	}
}
