package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/routerhq/router/internal/store"
	"github.com/routerhq/router/internal/testdb"
)

// `router conformance run --provider backup` built the adapter of every
// configured provider and refused to start when another provider's API key
// was not in the environment, though it never calls that provider: a
// pipeline that tests one provider with only its own secret could not run.
// Only the selected targets are built now. Found by review.
func TestConformanceRunOfOneProviderNeedsOnlyItsKey(t *testing.T) {
	db := testdb.New(t, store.Options{})
	t.Setenv("DATABASE_URL", db.URL)
	srv := newReferenceLLM(t)
	prompts, _ := filepath.Abs("../../prompts")
	cfg := filepath.Join(t.TempDir(), "router.yaml")
	if err := os.WriteFile(cfg, fmt.Appendf(nil, `database_url: %q
prompts_dir: %q
log: {level: error}
providers:
  - {name: primary, type: openai, base_url: "http://127.0.0.1:1/v1", api_key_env: SELECTED_PRIMARY_KEY, model: gpt-4o}
  - {name: backup, type: openai, base_url: "%s/v1", api_key_env: SELECTED_BACKUP_KEY, model: gpt-4o-mini, stream: false, max_retries: 0}
routes:
  default: {providers: [primary, backup]}
`, db.URL, prompts, srv.URL), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("SELECTED_PRIMARY_KEY", "")
	t.Setenv("SELECTED_BACKUP_KEY", "sk-backup")
	run := func(provider string) (string, error) {
		var out, errOut bytes.Buffer
		err := conformanceCommand(context.Background(), []string{"run", "--config", cfg, "--suites", suitesDir(t),
			"--provider", provider, "--prompt", "triage", "--json"}, &out, &errOut)
		return out.String() + errOut.String(), err
	}
	if out, err := run("backup"); err != nil {
		t.Fatalf("testing backup alone: %v\n%s", err, out)
	}
	// The provider that is called still needs its key, and is named.
	if _, err := run("primary"); err == nil || !strings.Contains(err.Error(), "environment variable SELECTED_PRIMARY_KEY is empty") {
		t.Fatalf("testing primary without its key: %v", err)
	}
}
