package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/routerhq/router/internal/store"
	"github.com/routerhq/router/internal/testdb"
)

// `router conformance run --provider fallback/small` builds only the target
// it runs, yet its run with the route's alias gpt-4o is counted as routing
// counts a chat completion naming gpt-4o on fallback/small: as provider
// fallback's own target, which serves gpt-4o with the tokenizer the provider
// sets (cl100k_base), not with the one gpt-4o's name would choose.
func TestConformanceRunCountsAnAliasAsItsOwnTarget(t *testing.T) {
	db := testdb.New(t, store.Options{})
	t.Setenv("DATABASE_URL", db.URL)
	srv := newReferenceLLM(t)
	prompts, _ := filepath.Abs("../../prompts")
	cfg := filepath.Join(t.TempDir(), "router.yaml")
	if err := os.WriteFile(cfg, []byte(fmt.Sprintf(`database_url: %q
prompts_dir: %q
log: {level: error}
providers:
  - {name: primary, type: openai, base_url: %[3]s/v1, model: primary-model, stream: false, max_retries: 0}
  - {name: fallback, type: openai, base_url: %[3]s/v1, model: gpt-4o, tokenizer: cl100k_base, stream: false, max_retries: 0}
routes:
  default:
    targets: [{provider: primary}, {provider: fallback, model: small}]
    models: [gpt-4o]
    conformance_prompt: triage
conformance: {max_age: 168h, gate: fallbacks}
`, db.URL, prompts, srv.URL)), 0o600); err != nil {
		t.Fatal(err)
	}
	var out, errOut bytes.Buffer
	if err := conformanceCommand(context.Background(), []string{"run", "--config", cfg, "--suites", suitesDir(t),
		"--provider", "fallback/small", "--prompt", "triage", "--json"}, &out, &errOut); err != nil {
		t.Fatalf("%v\n%s\n%s", err, out.String(), errOut.String())
	}
	var rep struct {
		Results []struct {
			Model string `json:"model"`
			Cases []struct {
				Name     string `json:"name"`
				Encoding string `json:"encoding"`
			} `json:"cases"`
		} `json:"results"`
	}
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		t.Fatalf("%v: %s", err, out.String())
	}
	ran := false
	for _, r := range rep.Results {
		if r.Model != "gpt-4o" {
			continue
		}
		ran = true
		for _, c := range r.Cases {
			if c.Encoding != "cl100k_base" {
				t.Errorf("alias case %s counted with %q; routing counts gpt-4o on provider fallback as the target fallback, with cl100k_base", c.Name, c.Encoding)
			}
		}
	}
	if !ran {
		t.Fatalf("no alias run: %s", out.String())
	}
}
