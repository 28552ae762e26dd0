package telemetry

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"strings"

	"go.opentelemetry.io/otel/sdk/resource"
)

// Warning is something in the OTEL_* environment that SetupLogged accepts
// but warns of on the router's log: Msg as logged, Attrs its key-value pairs
// as slog takes them ("variable", "OTEL_BSP_SCHEDULE_DELAY", "value", "5s").
type Warning struct {
	Msg   string
	Attrs []any
}

// String is the warning on one line, as `router config check` prints it:
// Msg, then its attributes as key=value in brackets, a value quoted when it
// is empty or holds a space, a quote or "=".
func (w Warning) String() string {
	if len(w.Attrs) == 0 {
		return w.Msg
	}
	var b strings.Builder
	b.WriteString(w.Msg)
	b.WriteString(" (")
	for i := 0; i+1 < len(w.Attrs); i += 2 {
		if i > 0 {
			b.WriteByte(' ')
		}
		v := fmt.Sprint(w.Attrs[i+1])
		if v == "" || strings.ContainsAny(v, " \t\"=") {
			v = strconv.Quote(v)
		}
		fmt.Fprintf(&b, "%v=%s", w.Attrs[i], v)
	}
	b.WriteByte(')')
	return b.String()
}

// EnvWarnings are the warnings SetupLogged logs at start for the process's
// environment (os.Getenv, which the SDK reads too), in the order it logs
// them, without building an exporter, installing anything or dialling:
// none when the environment asks for no export (Enabled) or when CheckEnv
// refuses it (SetupLogged refuses before it warns). Not among them: what
// OpenTelemetry itself reports while SetupLogged builds the tracer provider
// (newSetupErrorLog; an unreadable sampler ratio, a partly malformed
// OTEL_RESOURCE_ATTRIBUTES), which repeats these. `router config check`
// lists them (server.Check); SetupLogged logs the same list (envSetup).
func EnvWarnings(ctx context.Context) []Warning {
	if !Enabled(os.Getenv) {
		return nil
	}
	proto, _, err := exportEnv(os.Getenv)
	if err != nil {
		return nil
	}
	_, warnings, err := envSetup(ctx, "", os.Getenv, proto)
	if err != nil {
		return nil
	}
	return warnings
}

// envSetup is the resource SetupLogged gives the tracer provider (Resource)
// and every warning it logs about the environment, once exportEnv passed:
// a partly malformed OTEL_RESOURCE_ATTRIBUTES, an http/protobuf
// OTEL_EXPORTER_OTLP_TRACES_ENDPOINT without a path, an unreadable value
// length limit, an OTLP timeout or compression the exporter would ignore
// (exporterEnvWarnings), sampler or OTEL_BSP_* variable (sdkEnvWarnings). The one
// list SetupLogged and EnvWarnings share.
func envSetup(ctx context.Context, version string, getenv func(string) string, proto string) (*resource.Resource, []Warning, error) {
	res, warnings, err := buildResource(ctx, version)
	if err != nil {
		return nil, nil, err
	}
	warnings = append(warnings, rootTracesEndpointWarnings(getenv, proto)...)
	if key, raw := unreadableLengthLimit(getenv); key != "" {
		warnings = append(warnings, Warning{Msg: key + " is not an integer: string span attributes stay truncated to the router's default; write a number of bytes, or -1 for no limit",
			Attrs: []any{"value", raw, "limit", DefaultAttributeValueLengthLimit}})
	}
	warnings = append(warnings, exporterEnvWarnings(getenv)...)
	return res, append(warnings, sdkEnvWarnings(getenv)...), nil
}

// logWarnings warns of each of warnings on log.
func logWarnings(log *slog.Logger, warnings []Warning) {
	for _, w := range warnings {
		log.Warn(w.Msg, w.Attrs...)
	}
}
