package telemetry

import (
	"fmt"
	"strings"

	"go.opentelemetry.io/contrib/propagators/autoprop"
	"go.opentelemetry.io/otel/propagation"
)

// propagatorNames are the values OTEL_PROPAGATORS takes (autoprop's registry),
// for the error that refuses another.
const propagatorNames = "tracecontext, baggage, b3, b3multi, jaeger, xray, ottrace or none"

// defaultPropagator is OTEL_PROPAGATORS' default: W3C trace context and
// baggage.
func defaultPropagator() propagation.TextMapPropagator {
	return propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{})
}

// Propagator is the propagator OTEL_PROPAGATORS names, a comma-separated list
// (case and spaces around names ignored, as the OpenTelemetry specification
// has it for its enum variables): the one that reads the caller's trace
// headers and writes the attempt's into outbound provider calls. Unset or
// empty: tracecontext,baggage. "none" (alone or in the list) propagates
// nothing — provider calls carry no traceparent, and a caller's is not
// continued. An unknown name is refused, so a typo does not silently turn
// propagation off or back to the default (autoprop's own reading of the
// variable only logs it).
func Propagator(getenv func(string) string) (propagation.TextMapPropagator, error) {
	raw := getenv("OTEL_PROPAGATORS")
	var names []string
	for _, n := range strings.Split(raw, ",") {
		if n = strings.ToLower(strings.TrimSpace(n)); n != "" {
			names = append(names, n)
		}
	}
	if len(names) == 0 {
		return defaultPropagator(), nil
	}
	p, err := autoprop.TextMapPropagator(names...)
	if err != nil {
		return nil, fmt.Errorf("telemetry: OTEL_PROPAGATORS %q: %w; use a comma-separated list of %s, or leave it unset for tracecontext,baggage", raw, err, propagatorNames)
	}
	return p, nil
}
