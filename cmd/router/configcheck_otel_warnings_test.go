package main

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
)

// otelKeys are the OTEL_* variables the router or its SDK reads that a
// test of config check's OpenTelemetry warnings clears first.
var otelKeys = []string{
	"OTEL_SDK_DISABLED", "OTEL_TRACES_EXPORTER", "OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
	"OTEL_EXPORTER_OTLP_PROTOCOL", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_EXPORTER_OTLP_HEADERS", "OTEL_EXPORTER_OTLP_TRACES_HEADERS",
	"OTEL_PROPAGATORS", "OTEL_RESOURCE_ATTRIBUTES", "OTEL_SERVICE_NAME", "OTEL_TRACES_SAMPLER", "OTEL_TRACES_SAMPLER_ARG",
	"OTEL_BSP_SCHEDULE_DELAY", "OTEL_BSP_EXPORT_TIMEOUT", "OTEL_BSP_MAX_QUEUE_SIZE", "OTEL_BSP_MAX_EXPORT_BATCH_SIZE",
	"OTEL_SPAN_ATTRIBUTE_VALUE_LENGTH_LIMIT", "OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT",
}

// `router serve` warns at start, on its log, of the OTEL_* values
// OpenTelemetry cannot read and replaces (telemetry.SetupLogged): an
// OTEL_BSP_SCHEDULE_DELAY written as a duration, a sampler ratio written as a
// percentage, a partly malformed OTEL_RESOURCE_ATTRIBUTES. `router config
// check`, which operators run in CI before a deploy and which prints "the
// warnings serve would log", listed none of them. It lists them now, exit 0
// (they are not refused), and none of them for an environment serve does
// not warn of. The collector named here does not answer: nothing is sent.
func TestConfigCheckListsServesOTELWarnings(t *testing.T) {
	t.Setenv("DATABASE_URL", "postgres://u@127.0.0.1:1/d?connect_timeout=1")
	t.Setenv("ROUTER_DEMO_KEY", "demo-key")
	demo, err := filepath.Abs("../../demo/router.yaml")
	if err != nil {
		t.Fatal(err)
	}
	const endpoint = "http://127.0.0.1:1"
	for name, c := range map[string]struct {
		env  map[string]string
		want []string // in stderr; none: no OTEL_ warning at all
	}{
		"schedule delay as a duration": {map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": endpoint, "OTEL_BSP_SCHEDULE_DELAY": "5s"},
			[]string{"warning: OTEL_BSP_SCHEDULE_DELAY is not an integer", "5000 for 5s", "variable=OTEL_BSP_SCHEDULE_DELAY value=5s"}},
		"sampler ratio as a percentage": {map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": endpoint, "OTEL_TRACES_SAMPLER": "traceidratio", "OTEL_TRACES_SAMPLER_ARG": "10%"},
			[]string{"warning: OTEL_TRACES_SAMPLER_ARG is not a ratio from 0 to 1", "variable=OTEL_TRACES_SAMPLER_ARG value=10%"}},
		"sampler argument alone": {map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": endpoint, "OTEL_TRACES_SAMPLER_ARG": "10%"},
			[]string{"warning: OTEL_TRACES_SAMPLER_ARG is set but OTEL_TRACES_SAMPLER is not"}},
		"resource attributes": {map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": endpoint, "OTEL_RESOURCE_ATTRIBUTES": "deployment.environment=prod,team"},
			[]string{"warning: OTEL_RESOURCE_ATTRIBUTES is partly malformed"}},
		"clean":       {map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": endpoint, "OTEL_TRACES_SAMPLER": "parentbased_traceidratio", "OTEL_TRACES_SAMPLER_ARG": "0.1", "OTEL_BSP_SCHEDULE_DELAY": "1000"}, nil},
		"no export":   {map[string]string{"OTEL_BSP_SCHEDULE_DELAY": "5s"}, nil}, // serve exports nothing, so warns of nothing
		"nothing set": {nil, nil},
	} {
		t.Run(name, func(t *testing.T) {
			for _, k := range otelKeys {
				t.Setenv(k, c.env[k])
			}
			var code int
			stdout, stderr := captureOutput(t, func() { code = run(context.Background(), []string{"config", "check", "--config", demo}) })
			if code != 0 || !strings.HasPrefix(stdout, demo+": valid for this binary") {
				t.Fatalf("exit %d, stdout %q, stderr %q; want exit 0 (an OTEL_* value serve replaces is not refused)", code, stdout, stderr)
			}
			if len(c.want) == 0 {
				if strings.Contains(stderr, "OTEL_") {
					t.Errorf("stderr %q warns of OTEL_* variables serve does not warn of", stderr)
				}
				return
			}
			for _, w := range c.want {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr %q lacks %q (serve warns of it at start)", stderr, w)
				}
			}
			if !strings.Contains(stdout, "warning(s) above") {
				t.Errorf("stdout %q does not count the warnings", stdout)
			}
		})
	}
}
