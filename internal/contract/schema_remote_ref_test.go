package contract_test

import (
	"strings"
	"testing"

	"github.com/routerhq/router/internal/contract"
)

// A "$ref" to a schema on the network failed with the library's "no Loader
// found for https://...", which did not say what to do. It says the router
// loads files only, and how to refer to one. Found by review.
func TestRemoteRefSaysHowToFixIt(t *testing.T) {
	_, _, err := contract.CompileSchemaReading([]byte(`{"type":"object","properties":{"a":{"$ref":"https://example.com/x.json"}}}`), "file:///tmp/out.json")
	if err == nil || !strings.Contains(err.Error(), "https://example.com/x.json") || !strings.Contains(err.Error(), "loads no schema from the network, only files") {
		t.Fatalf("CompileSchemaReading = %v", err)
	}
}
