package telemetry

import (
	"strings"
	"testing"
)

// The OTLP exporter builds its request URL from the endpoint's host and
// path only (otlptracehttp's otlpconfig: cfg.Traces.Endpoint = u.Host,
// URLPath = u.Path; client: url.URL{Scheme, Host, Path}). A credential
// written into the endpoint — user:token@ (basic auth) or ?api_key=… — is
// dropped without a word: every batch goes out unauthenticated, the collector
// answers 401, and the spans are lost, the only sign a warning a minute.
// otlpEnvProblems refuses such endpoints at start-up, saying to move the
// credential into OTEL_EXPORTER_OTLP_HEADERS, and never shows the value.
func TestAnOTLPEndpointCarryingACredentialIsRefused(t *testing.T) {
	for _, ep := range []string{
		"https://user:s3cr3t@collector.example.com:4318",
		"https://collector.example.com:4318?api_key=s3cr3t",
	} {
		env := map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": ep}
		err := otlpEnvProblems(func(k string) string { return env[k] }, "http/protobuf")
		if err == nil {
			t.Errorf("endpoint %q accepted: the exporter drops its credential and sends every batch without it", ep)
			continue
		}
		if strings.Contains(err.Error(), "s3cr3t") {
			t.Errorf("the refusal shows the credential: %v", err)
		}
	}
}
