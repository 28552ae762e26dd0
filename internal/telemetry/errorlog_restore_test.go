package telemetry

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"

	"go.opentelemetry.io/otel"
)

// Once shut down, the router's log hears no more of OpenTelemetry's errors:
// OpenTelemetry's default handler keeps forwarding to the first handler ever
// set, so putting back the handler that was global before did not take the
// router's out. Found by review.
func TestShutdownStopsSendingErrorsToTheRoutersLog(t *testing.T) {
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:1")
	t.Setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "")
	t.Setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf")
	resetGlobals(t)
	first := newSignalHandler()
	shutdown, _, err := SetupLogged(context.Background(), "v-test", slog.New(first))
	if err != nil {
		t.Fatal(err)
	}
	if err := shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	otel.Handle(errors.New("after shutdown"))
	if got := first.String(); strings.Contains(got, "after shutdown") {
		t.Fatalf("an error after shutdown still reached the shut-down router's log: %q", got)
	}
	// A second setup in the same process hears the errors, not the first's log.
	second := newSignalHandler()
	shutdown, _, err = SetupLogged(context.Background(), "v-test", slog.New(second))
	if err != nil {
		t.Fatal(err)
	}
	defer shutdown(context.Background()) //nolint:errcheck
	otel.Handle(errors.New("during the second"))
	if got := second.String(); !strings.Contains(got, "during the second") {
		t.Fatalf("the second setup's log: %q", got)
	}
	if got := first.String(); strings.Contains(got, "during the second") {
		t.Fatalf("the first, shut-down log heard the second setup's error: %q", got)
	}
}
