package telemetry

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"
)

// A partly malformed OTEL_RESOURCE_ATTRIBUTES (an item without "=") no longer
// stops the router: its well-formed attributes are kept, and a warning says
// what is wrong. resource.New's ErrPartialResource was returned as Setup's
// error. Found by review.
func TestResourceKeepsAPartlyMalformedEnvironment(t *testing.T) {
	t.Setenv("OTEL_RESOURCE_ATTRIBUTES", "deployment.environment=prod,team")
	t.Setenv("OTEL_SERVICE_NAME", "")
	var logged bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logged, nil))
	res, err := Resource(context.Background(), "v-test", log)
	if err != nil {
		t.Fatalf("Resource: %v", err)
	}
	got := map[string]string{}
	for _, kv := range res.Attributes() {
		got[string(kv.Key)] = kv.Value.Emit()
	}
	if got["deployment.environment"] != "prod" || got["service.name"] != DefaultServiceName || got["service.version"] != "v-test" {
		t.Errorf("resource %v", got)
	}
	if _, ok := got["team"]; ok {
		t.Errorf("the malformed item became an attribute: %v", got)
	}
	if !strings.Contains(logged.String(), "level=WARN") || !strings.Contains(logged.String(), "OTEL_RESOURCE_ATTRIBUTES is partly malformed") {
		t.Errorf("no warning: %q", logged.String())
	}

	// And the router starts with it.
	if err := setupTracing(t, ""); err != nil {
		t.Fatalf("Setup with a partly malformed OTEL_RESOURCE_ATTRIBUTES: %v", err)
	}
}
