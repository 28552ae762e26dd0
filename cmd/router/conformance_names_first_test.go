package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/routerhq/router/internal/store"
	"github.com/routerhq/router/internal/testdb"
)

// A mistyped --prompt (or --provider) is refused, exit 2 naming the flag,
// right after the configuration and the prompts load: before the suites are
// read or a target is built. (--prompt was checked after every target was
// built, so with a provider's API key not in the environment a mistyped
// prompt exited 1 with the key's error, not the usage error the docs
// promise.)
func TestConformanceRunChecksNamesBeforeBuildingTargets(t *testing.T) {
	db := testdb.New(t, store.Options{})
	t.Setenv("DATABASE_URL", db.URL)
	prompts, _ := filepath.Abs("../../prompts")
	cfg := filepath.Join(t.TempDir(), "router.yaml")
	if err := os.WriteFile(cfg, fmt.Appendf(nil, `database_url: %q
prompts_dir: %q
log: {level: error}
providers:
  - {name: primary, type: openai, base_url: "http://127.0.0.1:1/v1", api_key_env: NAMES_FIRST_KEY, model: gpt-4o}
routes:
  default: {providers: [primary]}
`, db.URL, prompts), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("NAMES_FIRST_KEY", "")
	ctx := context.Background()
	missing := filepath.Join(t.TempDir(), "no-suites")
	for _, c := range []struct {
		flags []string
		want  string
	}{
		{[]string{"--prompt", "triag"}, "--prompt triag: not among the prompts"},
		{[]string{"--prompt", "triag", "--suites", missing}, "--prompt triag: not among the prompts"},
		{[]string{"--provider", "primry", "--suites", missing}, "--provider primry: not among the providers"},
	} {
		args := append([]string{"conformance", "run", "--config", cfg}, c.flags...)
		var code int
		stdout, stderr := captureOutput(t, func() { code = run(ctx, args) })
		if code != 2 || stdout != "" || !strings.Contains(stderr, c.want) || strings.Contains(stderr, "NAMES_FIRST_KEY") {
			t.Errorf("router %s: exit code %d, stdout %q, stderr %q; want exit code 2 saying %q",
				strings.Join(args, " "), code, stdout, stderr, c.want)
		}
	}
}
