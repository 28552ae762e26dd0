package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/routerhq/router/internal/store"
	"github.com/routerhq/router/internal/testdb"
)

// `router conformance run --provider p/mini` tests the model of the target
// p/mini, not its provider's own model: every request it makes asks for
// "mini", and the result recorded for p/mini (which the gate reads before
// sending p/mini failover traffic) is about "mini". The provider's own target,
// p, is tested on "big".
func TestConformanceRunTestsTheTargetsModel(t *testing.T) {
	db := testdb.New(t, store.Options{})
	t.Setenv("DATABASE_URL", db.URL)
	srv := newReferenceLLM(t)
	prompts, _ := filepath.Abs("../../prompts")
	cfg := filepath.Join(t.TempDir(), "router.yaml")
	if err := os.WriteFile(cfg, []byte(fmt.Sprintf(`database_url: %q
prompts_dir: %q
log: {level: error}
providers:
  - name: p
    type: openai
    base_url: %s/v1
    model: big
    stream: false # the mock answers plain JSON only
    max_retries: 0
routes:
  default:
    targets: [{provider: p}, {provider: p, model: mini}]
conformance: {max_age: 168h, gate: fallbacks}
`, db.URL, prompts, srv.URL)), 0o600); err != nil {
		t.Fatal(err)
	}
	cases := len(mustSuites(t)["triage"].Cases)
	for _, tc := range []struct{ target, model string }{{"p/mini", "mini"}, {"p", "big"}} {
		srv.Reset()
		var out, errOut bytes.Buffer
		err := conformanceCommand(context.Background(), []string{"run", "--config", cfg, "--suites", suitesDir(t),
			"--provider", tc.target, "--prompt", "triage", "--json"}, &out, &errOut)
		if err != nil {
			t.Fatalf("%s: %v\n%s\n%s", tc.target, err, out.String(), errOut.String())
		}
		models := srv.Asked()
		seen := fmt.Sprint(models)
		ok := len(models) == 1 && models[tc.model] == cases
		if !ok {
			t.Fatalf("%s: requests by model %s, want all %d for %q", tc.target, seen, cases, tc.model)
		}
		var stored string
		if err := db.Pool.QueryRow(context.Background(),
			`SELECT model FROM conformance_runs WHERE provider = $1 AND passed`, tc.target).Scan(&stored); err != nil || stored != tc.model {
			t.Fatalf("%s: stored run's model %q (%v), want %q", tc.target, stored, err, tc.model)
		}
	}
}
