package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A provider that names no model of its own (one endpoint serving several
// models, each a route target {provider: oai, model: …}) is a configured
// provider: `router conformance run --help` says --provider takes "provider
// names or route target ids", and docs/conformance.md refuses only "an id
// that is neither a provider nor a route target". Yet `--provider oai` is
// refused with "--provider oai: not among the providers and route targets",
// which tells the operator that oai is not configured — a typo hunt — when
// it is, and the ids that would run (oai/gpt-4o, oai/gpt-4o-mini) are only
// in the list that follows. Either the provider's name selects its targets,
// or the refusal must say that oai has no model of its own and which of its
// targets to name.
func TestProviderNameWithoutOwnModel(t *testing.T) {
	dir := t.TempDir()
	prompts, _ := filepath.Abs("../../prompts")
	cfg := filepath.Join(dir, "router.yaml")
	if err := os.WriteFile(cfg, []byte(`database_url: postgres://127.0.0.1:1/unused
prompts_dir: `+prompts+`
log: {level: error}
providers:
  - {name: main, type: scripted, model: m0}
  - {name: oai, type: openai, base_url: "http://127.0.0.1:9/v1"}
routes:
  default:
    targets:
      - {provider: main, model: m0}
      - {provider: oai, model: gpt-4o}
      - {provider: oai, model: gpt-4o-mini}
`), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ flag, why string }{
		// A provider of the configuration, with no model of its own.
		{"oai", "names a configured provider"},
		// The route target written {provider: main, model: m0}, m0 being
		// main's own model: its id is "main", but the docs' rule ("the id
		// of a route target {provider: p, model: mini}" is p/mini) makes it
		// main/m0, and the refusal says no such target is configured.
		{"main/m0", "is the route target {provider: main, model: m0}"},
	} {
		var out, errOut bytes.Buffer
		err := conformanceCommand(context.Background(), []string{"run", "--config", cfg, "--suites", suitesDir(t),
			"--provider", tc.flag, "--prompt", "triage"}, &out, &errOut)
		msg := errOut.String()
		if err != nil {
			msg += err.Error()
		}
		if strings.Contains(msg, tc.flag+": not among the providers and route targets") {
			t.Errorf("--provider %s %s, yet is refused as not one:\n%s", tc.flag, tc.why, msg)
		}
	}
}
