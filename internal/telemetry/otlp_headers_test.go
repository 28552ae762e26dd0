package telemetry

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"strings"
	"testing"

	"go.opentelemetry.io/otel"
)

// otlpChildEnv marks the re-executed test binary that runs SetupLogged with
// the environment under test, so that everything the process writes to its
// stderr — OpenTelemetry's own internal logger included, which writes to
// file descriptor 2 and cannot be captured in-process — can be read.
const otlpChildEnv = "ROUTER_TELEMETRY_OTLP_CHILD"

// TestOTLPEnvChild is the child's body: start telemetry with the
// router's log on stderr, export one span, shut down. Skipped unless run by
// otlpChild.
func TestOTLPEnvChild(t *testing.T) {
	if os.Getenv(otlpChildEnv) == "" {
		t.Skip("run by the tests below")
	}
	shutdown, enabled, err := SetupLogged(context.Background(), "v-test", slog.New(slog.NewTextHandler(os.Stderr, nil)))
	fmt.Fprintf(os.Stderr, "SETUP enabled=%v err=%v\n", enabled, err)
	if err != nil {
		return
	}
	_, span := otel.Tracer("review").Start(context.Background(), "span")
	span.End()
	_ = shutdown(context.Background())
}

// otlpChild runs TestOTLPEnvChild in a new process with env added,
// and returns all it wrote.
func otlpChild(t *testing.T, env ...string) string {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestOTLPEnvChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), otlpChildEnv+"=1", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT=", "OTEL_EXPORTER_OTLP_TRACES_HEADERS=",
		"OTEL_SDK_DISABLED=", "OTEL_TRACES_EXPORTER=", "OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf")
	cmd.Env = append(cmd.Env, env...)
	out, _ := cmd.CombinedOutput()
	return string(out)
}

// OTEL_EXPORTER_OTLP_HEADERS carries the collector's credential (Honeycomb's
// x-honeycomb-team, Grafana Cloud's or an OTLP gateway's Authorization). One
// written the HTTP way, "Authorization: Bearer …" (':' instead of '='), or
// with a '%' that does not unescape, is dropped by the exporter, which
// prints it — credential and all — on stderr through OpenTelemetry's own
// logger (not the router's log, and not redacted); the router then started
// "exporting OpenTelemetry traces" without the header, every batch refused by
// the collector. It refuses to start now, naming the variable and not the
// value, as it refuses an unknown OTEL_PROPAGATORS or protocol. Found by
// review.
func TestMalformedOTLPHeadersRefusedWithoutTheCredential(t *testing.T) {
	const secret = "sekrit-collector-token-0123456789"
	for _, headers := range []string{
		"Authorization: Bearer " + secret,    // ':' as in HTTP
		"x-honeycomb-team=" + secret + "%zz", // a value that does not unescape
	} {
		out := otlpChild(t, "OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:1", "OTEL_EXPORTER_OTLP_HEADERS="+headers)
		if !strings.Contains(out, "SETUP ") {
			t.Fatalf("the child did not run:\n%s", out)
		}
		if strings.Contains(out, secret) {
			t.Errorf("OTEL_EXPORTER_OTLP_HEADERS=%q: the credential is printed:\n%s", headers, out)
		}
		if !strings.Contains(out, "SETUP enabled=false err=") || !strings.Contains(out, "OTEL_EXPORTER_OTLP_HEADERS") {
			t.Errorf("OTEL_EXPORTER_OTLP_HEADERS=%q: tracing started without the header instead of refusing, naming the variable:\n%s", headers, out)
		}
	}
}

// What the exporter reads whole is accepted; each item it would drop is
// refused, naming the variable and the item, never the value.
func TestOTLPEnvProblems(t *testing.T) {
	const secret = "sekrit-collector-token-0123456789"
	for _, c := range []struct {
		env  map[string]string
		want string // "" accepted
	}{
		{map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": " HTTPS://collector:4318 ", "OTEL_EXPORTER_OTLP_HEADERS": "authorization=Bearer%20" + secret + ", x-team = a b "}, ""},
		{map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://[::1]:4318/v1/traces", "OTEL_EXPORTER_OTLP_TRACES_HEADERS": "x-honeycomb-team=" + secret + ",x-empty="}, ""},
		{map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "unix:///run/otel.sock", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"}, ""},
		{map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "unix:///run/otel.sock"}, "OTEL_EXPORTER_OTLP_ENDPOINT does not start with http:// or https://"},
		{map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://:4318"}, "OTEL_EXPORTER_OTLP_ENDPOINT has no host"},
		{map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://" + secret + "@:4318"}, "OTEL_EXPORTER_OTLP_ENDPOINT has no host"},
		// The exporter passes over an empty item (a stray comma), trims the
		// whole value and each decoded value (a secret file's last line
		// break), and parses both headers variables, the traces one
		// replacing the other only after both are read, so a bad item in
		// either is refused; an overridden generic endpoint need only parse;
		// the gRPC exporter dials host:port as written (found in review).
		{map[string]string{"OTEL_EXPORTER_OTLP_HEADERS": "a=b,"}, ""},
		{map[string]string{"OTEL_EXPORTER_OTLP_HEADERS": "authorization=Bearer%20" + secret + "\n"}, ""},
		{map[string]string{"OTEL_EXPORTER_OTLP_HEADERS": "authorization=Bearer%20" + secret + "%0A"}, ""},
		{map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "otel-collector:4317", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"}, ""},
		{map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "otel-collector:4317", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://collector:4318/v1/traces"}, ""},
		{map[string]string{"OTEL_EXPORTER_OTLP_HEADERS": "Authorization: " + secret, "OTEL_EXPORTER_OTLP_TRACES_HEADERS": "authorization=x"}, `OTEL_EXPORTER_OTLP_HEADERS item 1 of 1 has no "="`},
		{map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "10.0.0.5:4317", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://collector:4318/v1/traces"}, "OTEL_EXPORTER_OTLP_ENDPOINT is not a URL"},
		{map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "collector:4318"}, "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT does not start with http:// or https://"},
		{map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "10.0.0.5:4317", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"}, "OTEL_EXPORTER_OTLP_ENDPOINT is not a URL"},
		{map[string]string{"OTEL_EXPORTER_OTLP_HEADERS": "Authorization Bearer " + secret + "=x"}, "OTEL_EXPORTER_OTLP_HEADERS item 1 of 1 has a name that is not an HTTP header name"},
		{map[string]string{"OTEL_EXPORTER_OTLP_TRACES_HEADERS": "a=b,authorization=Bearer%0A" + secret}, "OTEL_EXPORTER_OTLP_TRACES_HEADERS item 2 of 2 has a value holding a line break"},
	} {
		getenv := func(k string) string { return c.env[k] }
		proto, err := Protocol(getenv)
		if err != nil {
			t.Fatal(err)
		}
		err = otlpEnvProblems(getenv, proto)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%v refused: %v", c.env, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%v: got %v, want %q", c.env, err, c.want)
		case err != nil && strings.Contains(err.Error(), secret):
			t.Errorf("%v: the refusal repeats the value: %v", c.env, err)
		}
	}
}
