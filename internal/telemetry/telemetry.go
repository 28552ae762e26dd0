// Package telemetry owns the router's OpenTelemetry set-up: the OTLP trace
// exporter configured by the standard OTEL_* environment variables, the global
// tracer provider and the propagator OTEL_PROPAGATORS names (W3C trace context
// and baggage by default; propagators.go). Spans themselves are
// made where the work is (internal/api: a span per request; internal/race: per
// job and per attempt).
//
// With neither OTEL_EXPORTER_OTLP_ENDPOINT nor OTEL_EXPORTER_OTLP_TRACES_ENDPOINT
// set, Setup installs OpenTelemetry's no-op tracer provider, whose spans cost
// no allocation and export nothing, and Off tells the span makers to skip
// building their names and attributes too.
package telemetry

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"strconv"
	"strings"

	"github.com/go-logr/logr"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace/noop"
)

// DefaultServiceName is service.name unless OTEL_SERVICE_NAME (or
// OTEL_RESOURCE_ATTRIBUTES) says otherwise.
const DefaultServiceName = "router"

// Enabled reports whether the environment asks for trace export: an OTLP
// endpoint is set, the SDK is not disabled (OTEL_SDK_DISABLED=true) and the
// traces exporter is not "none" (OTEL_TRACES_EXPORTER).
// Values are read as the exporter reads them (spaces around them ignored) and
// compared ignoring case, as the OpenTelemetry specification has it for its
// enum variables.
func Enabled(getenv func(string) string) bool {
	if enumValue(getenv, "OTEL_SDK_DISABLED") == "true" || enumValue(getenv, "OTEL_TRACES_EXPORTER") == "none" {
		return false
	}
	return strings.TrimSpace(getenv("OTEL_EXPORTER_OTLP_ENDPOINT")) != "" || strings.TrimSpace(getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")) != ""
}

// enumValue is the variable key as an enum value: lower case, without the
// spaces around it.
func enumValue(getenv func(string) string, key string) string {
	return strings.ToLower(strings.TrimSpace(getenv(key)))
}

// Protocol is the OTLP protocol the environment selects: grpc or http/protobuf
// (the default), from OTEL_EXPORTER_OTLP_TRACES_PROTOCOL or
// OTEL_EXPORTER_OTLP_PROTOCOL, case and spaces around the value ignored
// ("GRPC" is grpc).
func Protocol(getenv func(string) string) (string, error) {
	key := "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"
	p := enumValue(getenv, key)
	if p == "" {
		key = "OTEL_EXPORTER_OTLP_PROTOCOL"
		p = enumValue(getenv, key)
	}
	switch p {
	case "", "http/protobuf":
		return "http/protobuf", nil
	case "grpc":
		return "grpc", nil
	}
	return "", fmt.Errorf("telemetry: %s %q is not supported: use http/protobuf or grpc", key, getenv(key))
}

// rootTracesEndpointWarnings warn when OTEL_EXPORTER_OTLP_TRACES_ENDPOINT,
// used as it is with http/protobuf (the OTLP specification), has no path or
// "/": every batch then goes to "/", which a collector answers 404, the base
// URL being what OTEL_EXPORTER_OTLP_ENDPOINT takes.
func rootTracesEndpointWarnings(getenv func(string) string, proto string) []Warning {
	raw := strings.TrimSpace(getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"))
	if proto != "http/protobuf" || raw == "" {
		return nil
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Path != "" && u.Path != "/") {
		return nil
	}
	return []Warning{{Msg: "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT has no path: with http/protobuf it is used as it is, so spans are sent to \"/\", which an OpenTelemetry collector answers 404; write the whole URL (…/v1/traces) or set the base in OTEL_EXPORTER_OTLP_ENDPOINT instead",
		Attrs: []any{"endpoint", u.Redacted()}}}
}

// CheckEnv refuses what SetupLogged would refuse in the environment getenv
// reads, before it builds an exporter — an unsupported OTLP protocol or
// propagator, endpoints and headers the exporter would get wrong, TLS files
// it could not use (exporterFileProblems) — without
// building one, installing anything or sending a span: nil when the
// environment asks for no export (Enabled). `router config check` runs it.
func CheckEnv(getenv func(string) string) error {
	if !Enabled(getenv) {
		return nil
	}
	_, _, err := exportEnv(getenv)
	return err
}

// exportEnv is the OTLP protocol and the propagator the environment asks
// for, once SetupLogged's checks of it passed: the one code path SetupLogged
// and CheckEnv share.
func exportEnv(getenv func(string) string) (proto string, prop propagation.TextMapPropagator, err error) {
	if proto, err = Protocol(getenv); err != nil {
		return "", nil, err
	}
	if prop, err = Propagator(getenv); err != nil {
		return "", nil, err
	}
	// Before the exporter reads them: it prints what it cannot read.
	if err := otlpEnvProblems(getenv, proto); err != nil {
		return "", nil, err
	}
	if err := bspProblems(getenv); err != nil {
		return "", nil, err
	}
	if err := exporterFileProblems(getenv); err != nil {
		return "", nil, err
	}
	return proto, prop, nil
}

// Setup is SetupLogged with slog's default logger.
func Setup(ctx context.Context, version string) (shutdown func(context.Context) error, enabled bool, err error) {
	return SetupLogged(ctx, version, slog.Default())
}

// SetupLogged installs the OTLP tracer provider and the propagator
// OTEL_PROPAGATORS names (Propagator) when Enabled; otherwise it installs the
// no-op tracer provider (see Off), leaves OpenTelemetry's no-op propagator in
// place and returns a no-op shutdown. The exporter and the batch span
// processor read the standard variables themselves (endpoints, headers,
// timeouts, OTEL_BSP_SCHEDULE_DELAY, ...); endpoints, headers and TLS files it
// would get wrong are refused first (otlpEnvProblems, exporterFileProblems).
// shutdown flushes pending spans, and logs the spans the batch span processor
// dropped on a full queue not logged yet (dropLog).
// log hears what is accepted with a warning (envSetup, the list EnvWarnings
// returns: a partly malformed OTEL_RESOURCE_ATTRIBUTES, an http/protobuf
// OTEL_EXPORTER_OTLP_TRACES_ENDPOINT without a path, an unreadable value
// length limit, sampler or OTEL_BSP_* variable (sdkEnvWarnings)) and, while tracing is on,
// OpenTelemetry's errors: those it reports while the tracer provider is
// built, then failed exports among others, at most once a minute
// (errorLog; after shutdown they go where OpenTelemetry's default handler
// sends them).
func SetupLogged(ctx context.Context, version string, log *slog.Logger) (shutdown func(context.Context) error, enabled bool, err error) {
	nop := func(context.Context) error { return nil }
	if !Enabled(os.Getenv) {
		otel.SetTracerProvider(noop.NewTracerProvider())
		return nop, false, nil
	}
	proto, prop, err := exportEnv(os.Getenv)
	if err != nil {
		return nop, false, err
	}
	// What OpenTelemetry reports while the exporter and the tracer provider
	// are built (an OTEL_TRACES_SAMPLER_ARG it cannot read) goes to the
	// router's log too, not to the standard library's logger
	// (newSetupErrorLog; handler is installed over it below). Refused, the
	// setup leaves the errors where they went before.
	prev := errorTarget.Load()
	building := newSetupErrorLog(log)
	building.install()
	// The exporter reports a variable it cannot use (a timeout it cannot
	// parse) on OpenTelemetry's internal logger, not to its error handler:
	// its errors go the same way (errorSink).
	otel.SetLogger(logr.New(errorSink{}))
	defer func() {
		if err != nil {
			errorTarget.CompareAndSwap(building, prev)
		}
	}()
	var exp sdktrace.SpanExporter
	if proto == "grpc" {
		exp, err = otlptracegrpc.New(ctx)
	} else {
		exp, err = otlptracehttp.New(ctx)
	}
	if err != nil {
		return nop, false, fmt.Errorf("telemetry: OTLP %s exporter: %w", proto, err)
	}
	res, warnings, err := envSetup(ctx, version, os.Getenv, proto)
	if err != nil {
		return nop, false, err
	}
	logWarnings(log, warnings) // EnvWarnings: what `router config check` lists
	// Spans the batch span processor drops on a full queue are counted and
	// logged (dropLog): the SDK tells no one.
	drops := newDropLog(log, bspQueueSize(os.Getenv))
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(drops.batcher(exp)), sdktrace.WithResource(res),
		sdktrace.WithRawSpanLimits(SpanLimits(os.Getenv)))
	handler := newErrorLog(log)
	handler.install()
	install(tp, prop)
	return func(ctx context.Context) error {
		err := tp.Shutdown(ctx) // a failed last export is logged by handler
		drops.shutdown()
		handler.uninstall()
		return err
	}, true, nil
}

// DefaultAttributeValueLengthLimit bounds every string attribute of the
// router's spans (bytes; longer values are truncated) unless
// OTEL_SPAN_ATTRIBUTE_VALUE_LENGTH_LIMIT or OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT
// says otherwise (-1 there: no limit). OpenTelemetry's own default is no
// limit, and some attributes carry what callers and providers send: a request
// span's url.path is the caller's path, up to net/http's 1 MB of request line
// and headers, sent before any authentication. The batch span processor keeps
// up to 2,048 ended spans, so unbounded, anyone who can reach the tenant
// listener could make it hold gigabytes (and build OTLP exports no collector
// accepts).
const DefaultAttributeValueLengthLimit = 4096

// lengthLimitKeys are the variables that set the value length limit, the
// first that holds an integer deciding.
var lengthLimitKeys = [...]string{"OTEL_SPAN_ATTRIBUTE_VALUE_LENGTH_LIMIT", "OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT"}

// SpanLimits are the tracer provider's span limits: OpenTelemetry's, from the
// standard OTEL_*_LIMIT variables, with string attributes bounded to
// DefaultAttributeValueLengthLimit unless one of the two value length
// variables holds an integer (the first that does decides; a negative one: no
// limit). An unreadable value ("4k") keeps the default: the SDK took it for
// no limit at all.
func SpanLimits(getenv func(string) string) sdktrace.SpanLimits {
	l := sdktrace.NewSpanLimits()
	l.AttributeValueLengthLimit = DefaultAttributeValueLengthLimit
	for _, key := range lengthLimitKeys {
		if n, err := strconv.Atoi(strings.TrimSpace(getenv(key))); err == nil {
			l.AttributeValueLengthLimit = n
			break
		}
	}
	return l
}

// unreadableLengthLimit is the first value length variable that is set but
// not an integer, and its value, when no integer one decides ("" if none).
func unreadableLengthLimit(getenv func(string) string) (key, value string) {
	for _, k := range lengthLimitKeys {
		v := strings.TrimSpace(getenv(k))
		if v == "" {
			continue
		}
		if _, err := strconv.Atoi(v); err == nil {
			return "", ""
		}
		if key == "" {
			key, value = k, v
		}
	}
	return key, value
}

// Resource is the router's resource: service.name "router" and its version,
// overridden by OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES. A partly
// malformed OTEL_RESOURCE_ATTRIBUTES ("deployment.environment=prod,team": an
// item without "=", a value that does not unescape) is not a reason to
// refuse to start (OpenTelemetry's error handling: telemetry does not stop
// the application): the SDK's partial resource, its well-formed attributes,
// is kept, and log warns of the rest.
func Resource(ctx context.Context, version string, log *slog.Logger) (*resource.Resource, error) {
	res, warnings, err := buildResource(ctx, version)
	if err != nil {
		return nil, err
	}
	logWarnings(log, warnings)
	return res, nil
}

// buildResource is Resource and the warning it logs, not logged.
func buildResource(ctx context.Context, version string) (*resource.Resource, []Warning, error) {
	attrs := []attribute.KeyValue{attribute.String("service.name", DefaultServiceName)}
	if version != "" {
		attrs = append(attrs, attribute.String("service.version", version))
	}
	var warnings []Warning
	env, err := resource.New(ctx, resource.WithFromEnv(), resource.WithTelemetrySDK())
	switch {
	case err != nil && errors.Is(err, resource.ErrPartialResource) && env != nil:
		warnings = append(warnings, Warning{Msg: "OTEL_RESOURCE_ATTRIBUTES is partly malformed: its well-formed key=value items are used, the rest ignored; write it as comma-separated key=value pairs (values percent-encoded)",
			Attrs: []any{"err", err}})
	case err != nil:
		return nil, nil, fmt.Errorf("telemetry: resource from OTEL_RESOURCE_ATTRIBUTES/OTEL_SERVICE_NAME: %w", err)
	}
	res, err := resource.Merge(resource.NewSchemaless(attrs...), env)
	if err != nil {
		return nil, nil, err
	}
	return res, warnings, nil
}

// Install makes tp the global tracer provider and W3C trace context (with
// baggage) the global propagator, the default of OTEL_PROPAGATORS: incoming
// traceparent headers are honoured and outbound provider calls carry the
// attempt's. Tests install an in-memory provider this way.
func Install(tp *sdktrace.TracerProvider) { install(tp, defaultPropagator()) }

// install makes tp the global tracer provider and p the global propagator.
func install(tp *sdktrace.TracerProvider, p propagation.TextMapPropagator) {
	otel.SetTracerProvider(tp)
	otel.SetTextMapPropagator(p)
}

// Off reports whether the global tracer provider is OpenTelemetry's no-op, as
// Setup leaves it when the environment asks for no export: no span is recorded
// anywhere. The router's span makers (a request's, a job's, an attempt's) then
// skip their span altogether, names and attributes included: they cost about
// 2% of the router's CPU and 4% of its allocations per job at 64 callers when
// built for nothing (docs/performance.md). Before any provider is installed
// (OpenTelemetry's delegating default, as in tests that install one later)
// Off is false.
func Off() bool {
	_, off := otel.GetTracerProvider().(noop.TracerProvider)
	return off
}
