package telemetry

import (
	"context"
	"io"
	"log/slog"
	"testing"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/trace/noop"
)

// CheckEnv refuses what SetupLogged refuses in the environment, the same
// message for each, and builds, installs and sends nothing: `router config
// check` runs it beside the running replicas.
func TestCheckEnvRefusesWhatSetupRefuses(t *testing.T) {
	const endpoint = "http://127.0.0.1:4318"
	for name, vars := range map[string]map[string]string{
		"protocol":        {"OTEL_EXPORTER_OTLP_ENDPOINT": endpoint, "OTEL_EXPORTER_OTLP_PROTOCOL": "http/json"},
		"traces protocol": {"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": endpoint + "/v1/traces", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": "thrift"},
		"propagator":      {"OTEL_EXPORTER_OTLP_ENDPOINT": endpoint, "OTEL_PROPAGATORS": "tracecontext,xray-typo"},
		"endpoint":        {"OTEL_EXPORTER_OTLP_ENDPOINT": "collector:4318"},
		"headers":         {"OTEL_EXPORTER_OTLP_ENDPOINT": endpoint, "OTEL_EXPORTER_OTLP_HEADERS": "authorization"},
		// The SDK panicked at start on a negative size and spun a core on a
		// schedule delay of 0.
		"negative queue size": {"OTEL_EXPORTER_OTLP_ENDPOINT": endpoint, "OTEL_BSP_MAX_QUEUE_SIZE": "-1"},
		"zero batch size":     {"OTEL_EXPORTER_OTLP_ENDPOINT": endpoint, "OTEL_BSP_MAX_EXPORT_BATCH_SIZE": "0"},
		"zero schedule delay": {"OTEL_EXPORTER_OTLP_ENDPOINT": endpoint, "OTEL_BSP_SCHEDULE_DELAY": "0"},
	} {
		t.Run(name, func(t *testing.T) {
			for _, k := range []string{"OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_PROTOCOL",
				"OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_PROPAGATORS", "OTEL_EXPORTER_OTLP_HEADERS", "OTEL_EXPORTER_OTLP_TRACES_HEADERS",
				"OTEL_SDK_DISABLED", "OTEL_TRACES_EXPORTER", "OTEL_BSP_MAX_QUEUE_SIZE", "OTEL_BSP_MAX_EXPORT_BATCH_SIZE", "OTEL_BSP_SCHEDULE_DELAY"} {
				t.Setenv(k, vars[k])
			}
			otel.SetTracerProvider(noop.NewTracerProvider())
			checked := CheckEnv(env(vars))
			if !Off() {
				t.Fatal("CheckEnv installed a tracer provider")
			}
			_, _, setupErr := SetupLogged(context.Background(), "test", slog.New(slog.NewTextHandler(io.Discard, nil)))
			if setupErr == nil {
				t.Fatal("SetupLogged accepted the environment: the case is wrong")
			}
			if checked == nil || checked.Error() != setupErr.Error() {
				t.Errorf("CheckEnv: %v; want SetupLogged's refusal: %v", checked, setupErr)
			}
		})
	}
	// No export asked for: nothing to refuse, whatever else is set.
	off := env(map[string]string{"OTEL_EXPORTER_OTLP_PROTOCOL": "http/json", "OTEL_PROPAGATORS": "nonsense"})
	if err := CheckEnv(off); err != nil {
		t.Errorf("CheckEnv with no endpoint: %v; want nil (SetupLogged exports nothing then)", err)
	}
	if err := CheckEnv(env(map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": endpoint})); err != nil {
		t.Errorf("CheckEnv of a good environment: %v", err)
	}
	// An export timeout of 0 is no timeout to the SDK, not a fault.
	if err := CheckEnv(env(map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": endpoint, "OTEL_BSP_EXPORT_TIMEOUT": "0"})); err != nil {
		t.Errorf("CheckEnv with OTEL_BSP_EXPORT_TIMEOUT=0: %v", err)
	}
}
