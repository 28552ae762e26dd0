package telemetry

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace/noop"
)

// EnvWarnings, which `router config check` lists, are the warnings
// SetupLogged logs at start, the same ones in the same order, with the same
// attributes (beside which it logs OpenTelemetry's own reports of some of
// them while the tracer provider is built), and it builds, installs and sends nothing; with no export
// asked for, SetupLogged warns of nothing and EnvWarnings returns nothing.
func TestEnvWarningsAreSetupLoggedsWarnings(t *testing.T) {
	collector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/x-protobuf")
	}))
	defer collector.Close()
	for k, v := range map[string]string{
		"OTEL_EXPORTER_OTLP_ENDPOINT":            "",
		"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT":     collector.URL, // no path: warned of
		"OTEL_EXPORTER_OTLP_PROTOCOL":            "",
		"OTEL_EXPORTER_OTLP_TRACES_PROTOCOL":     "",
		"OTEL_RESOURCE_ATTRIBUTES":               "deployment.environment=prod,team",
		"OTEL_SPAN_ATTRIBUTE_VALUE_LENGTH_LIMIT": "4k",
		"OTEL_TRACES_SAMPLER":                    "traceidratio",
		"OTEL_TRACES_SAMPLER_ARG":                "10%",
		"OTEL_BSP_SCHEDULE_DELAY":                "5s",
		"OTEL_BSP_MAX_QUEUE_SIZE":                "4k",
	} {
		t.Setenv(k, v)
	}
	t.Cleanup(func() {
		otel.SetTracerProvider(noop.NewTracerProvider())
		otel.SetTextMapPropagator(propagation.NewCompositeTextMapPropagator())
	})
	otel.SetTracerProvider(noop.NewTracerProvider())
	got := EnvWarnings(context.Background())
	if !Off() {
		t.Fatal("EnvWarnings installed a tracer provider")
	}
	var logged bytes.Buffer
	shutdown, enabled, err := SetupLogged(context.Background(), "v-test", slog.New(slog.NewJSONHandler(&logged, nil)))
	if err != nil || !enabled {
		t.Fatalf("enabled=%v err=%v", enabled, err)
	}
	_ = shutdown(context.Background())
	setupErrorMsg := newSetupErrorLog(nil).msg
	var want []Warning // Attrs: the record's attributes by key
	dec := json.NewDecoder(&logged)
	for dec.More() {
		var rec map[string]any
		if err := dec.Decode(&rec); err != nil {
			t.Fatal(err)
		}
		if rec["level"] != "WARN" || rec["msg"] == setupErrorMsg {
			continue // OpenTelemetry's own report of what is warned of (newSetupErrorLog)
		}
		want = append(want, Warning{Msg: rec["msg"].(string), Attrs: []any{rec}})
	}
	if len(want) != 6 {
		t.Errorf("SetupLogged warned %d times, want 6 (resource, endpoint, length limit, sampler, two OTEL_BSP_*): %q", len(want), logged.String())
	}
	if len(got) != len(want) {
		t.Fatalf("EnvWarnings: %v; SetupLogged warned of %v", got, want)
	}
	for i := range got {
		if got[i].Msg != want[i].Msg {
			t.Errorf("warning %d: EnvWarnings %q, SetupLogged %q", i, got[i].Msg, want[i].Msg)
		}
		rec := want[i].Attrs[0].(map[string]any)
		for j := 0; j+1 < len(got[i].Attrs); j += 2 {
			key := got[i].Attrs[j].(string)
			if v, ok := rec[key]; !ok || fmt.Sprint(v) != fmt.Sprint(got[i].Attrs[j+1]) {
				t.Errorf("warning %d (%s): EnvWarnings %s=%v, SetupLogged logged %v", i, got[i].Msg, key, got[i].Attrs[j+1], v)
			}
		}
	}

	// No export asked for: nothing warned of, whatever else is set.
	t.Setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "")
	if got := EnvWarnings(context.Background()); len(got) != 0 {
		t.Errorf("EnvWarnings with no endpoint: %v; want none (SetupLogged exports nothing and warns of nothing then)", got)
	}
}

// Warning.String is the warning on one line: the message, then its
// attributes as key=value, a value quoted when it needs it.
func TestWarningString(t *testing.T) {
	w := Warning{Msg: "OTEL_BSP_SCHEDULE_DELAY is not an integer", Attrs: []any{"variable", "OTEL_BSP_SCHEDULE_DELAY", "value", "5s", "default", "5000 ms", "limit", 4096}}
	want := `OTEL_BSP_SCHEDULE_DELAY is not an integer (variable=OTEL_BSP_SCHEDULE_DELAY value=5s default="5000 ms" limit=4096)`
	if got := w.String(); got != want {
		t.Errorf("String: %q; want %q", got, want)
	}
	if got := (Warning{Msg: "m"}).String(); got != "m" {
		t.Errorf("String without attributes: %q", got)
	}
}
