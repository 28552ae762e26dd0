package telemetry

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
	"unicode"

	"golang.org/x/net/http/httpguts"
)

// otlpEndpointKeys and otlpHeaderKeys are the variables the OTLP exporter
// reads for where spans go and the headers sent with them: both of each
// pair, the traces one overriding the other.
var (
	otlpEndpointKeys = [...]string{"OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"}
	otlpHeaderKeys   = [...]string{"OTEL_EXPORTER_OTLP_HEADERS", "OTEL_EXPORTER_OTLP_TRACES_HEADERS"}
)

// otlpEnvProblems refuses OTLP endpoints and headers the exporter would get
// wrong without failing, naming the variable and never its value (either may
// hold the collector's credential). The exporter drops a header it cannot
// read — and prints the item, credential and all, on stderr through
// OpenTelemetry's own logger — then sends every batch without it; it reads
// host:port without http:// as a URL of another scheme (no host: every
// span lost) or not at all (then the default, localhost:4318, gets them).
// proto is the OTLP protocol (Protocol): with grpc a unix:///path socket is
// an endpoint too.
func otlpEnvProblems(getenv func(string) string, proto string) error {
	var errs []error
	// The endpoints' rules apply to the variable the exporter sends to: the
	// traces one when set, which overrides the generic one (set, perhaps,
	// for another signal's exporter or a sidecar). The exporter still parses
	// the other, and prints it whole when it is not a URL.
	readKey := readBy(getenv, otlpEndpointKeys)
	for _, key := range otlpEndpointKeys {
		raw := strings.TrimSpace(getenv(key))
		why := ""
		switch {
		case key == readKey:
			why = endpointProblem(raw, proto)
		case raw != "":
			why = urlProblem(raw)
		}
		if why != "" {
			errs = append(errs, fmt.Errorf("telemetry: %s %s (the value is not shown: it may hold a credential)", key, why))
		}
	}
	// Every headers variable set is checked: the exporter parses both, and
	// prints a bad item of either before the traces one replaces the other.
	for _, key := range otlpHeaderKeys {
		if why := headersProblem(getenv(key)); why != "" {
			errs = append(errs, fmt.Errorf("telemetry: %s %s: write comma-separated name=value pairs, percent-encoding special characters "+
				"(authorization=Bearer%%20TOKEN); the value is not shown: it may hold a credential", key, why))
		}
	}
	return errors.Join(errs...)
}

// readBy is the variable of pair the exporter reads: the traces one (the
// second) when it is set, else the generic one; "" when neither is.
func readBy(getenv func(string) string, pair [2]string) string {
	for _, key := range []string{pair[1], pair[0]} {
		if strings.TrimSpace(getenv(key)) != "" {
			return key
		}
	}
	return ""
}

// endpointProblem is why raw, an endpoint variable without the spaces around
// it, cannot be one, "" when it can (or is unset).
func endpointProblem(raw, proto string) string {
	if raw == "" {
		return ""
	}
	if why := urlProblem(raw); why != "" {
		return why
	}
	u, _ := url.Parse(raw)
	switch {
	case proto == "grpc" && !strings.EqualFold(u.Scheme, "http") && !strings.EqualFold(u.Scheme, "https"):
		// The gRPC exporter dials anything else as its target as written
		// (otel-collector:4317, dns:///…, unix:///path).
		return ""
	case !strings.EqualFold(u.Scheme, "http") && !strings.EqualFold(u.Scheme, "https"):
		// "collector:4318" parses as scheme "collector": no host, no span sent.
		return "does not start with http:// or https://: " + endpointFix
	case u.Hostname() == "":
		return "has no host: " + endpointFix
	case u.User != nil || u.RawQuery != "":
		// The exporter sends to the scheme, host and path alone: a
		// user:token@ or ?api_key= is dropped without a word, every batch
		// goes out unauthenticated and the collector's 401 loses the spans.
		return "carries a credential (user:password@ or a query) that the exporter drops, sending every span without it: " +
			"put it in OTEL_EXPORTER_OTLP_HEADERS (authorization=Basic%20…, or the collector's API-key header) and write the endpoint as scheme://HOST:PORT/PATH alone"
	}
	return ""
}

const endpointFix = "write it as http://HOST:PORT, or https://HOST:PORT for TLS (for example http://collector:4318)"

// urlProblem is why raw, an endpoint variable without the spaces around it,
// does not parse as a URL, "" when it does (or is unset).
func urlProblem(raw string) string {
	if _, err := url.Parse(raw); err != nil {
		return "is not a URL: " + endpointFix // url.Error would quote it whole
	}
	return ""
}

// headersProblem is why raw, a headers variable, would lose an item, "" when
// the exporter reads all of them: comma-separated name=value items, the name
// an HTTP token and the value percent-decoded, as the OTLP exporter
// specification has it and OpenTelemetry's Go exporter reads them; a decoded
// value must fit in a header (no line break or other control character).
// As the exporter does, the spaces around the whole value and around each
// decoded value are trimmed (a secret file's last line break is no part of
// the header), and an empty item (a stray comma) is passed over.
func headersProblem(raw string) string {
	raw = strings.TrimSpace(raw)
	if raw == "" {
		return "" // unset, for the exporter as well
	}
	items := strings.Split(raw, ",")
	for i, item := range items {
		at := fmt.Sprintf("item %d of %d", i+1, len(items))
		name, value, ok := strings.Cut(item, "=")
		switch {
		case strings.TrimSpace(item) == "":
			continue
		case !ok:
			return at + ` has no "=" (an HTTP header's "Name: value" is written name=value here)`
		case !httpguts.ValidHeaderFieldName(strings.TrimSpace(name)):
			return at + " has a name that is not an HTTP header name (letters, digits and !#$%&'*+-.^_`|~ only)"
		}
		v, err := url.PathUnescape(value)
		if err != nil {
			return at + " has a value that does not percent-decode (a % not followed by two hex digits: write a % itself as %25)"
		}
		if strings.IndexFunc(strings.TrimSpace(v), unicode.IsControl) >= 0 {
			return at + " has a value holding a line break or another control character, which no header can carry"
		}
	}
	return ""
}
