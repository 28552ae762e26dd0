package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/routerhq/router/internal/providers/anthropicfake"
	"github.com/routerhq/router/internal/store"
	"github.com/routerhq/router/internal/testdb"
)

// --provider claude, claude having no model of its own, runs every target
// of claude (claude/a, claude/b); --provider main/m0, m0 being main's own
// model, runs the target main. Each is recorded under its target id.
func TestConformanceProviderNameRunsItsTargets(t *testing.T) {
	db := testdb.New(t, store.Options{})
	refs := referenceByInput(t)
	srv := anthropicfake.New(t, func(r anthropicfake.Request) anthropicfake.Reply {
		msgs, _ := r.Body["messages"].([]any)
		last, _ := msgs[len(msgs)-1].(map[string]any)
		blocks, _ := last["content"].([]any)
		text, _ := blocks[len(blocks)-1].(map[string]any)["text"].(string)
		return anthropicfake.Reply{Text: refs[text], InputTokens: 10, OutputTokens: 5}
	})
	t.Setenv("DATABASE_URL", db.URL)
	prompts, _ := filepath.Abs("../../prompts")
	cfg := filepath.Join(t.TempDir(), "router.yaml")
	if err := os.WriteFile(cfg, []byte(fmt.Sprintf(`database_url: %q
prompts_dir: %q
log: {level: error}
providers:
  - name: main
    type: scripted
    model: m0
    script:
      - output: '{"category":"technical","priority":"high","summary":"Customer cannot log in since the reset link expired.","needs_human":false}'
  - {name: claude, type: anthropic, base_url: %q, max_retries: 0}
routes:
  default:
    targets:
      - {provider: main, model: m0}
      - {provider: claude, model: a}
      - {provider: claude, model: b}
conformance: {max_age: 168h, gate: fallbacks}
`, db.URL, prompts, srv.URL)), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	var out, errOut bytes.Buffer
	err := conformanceCommand(ctx, []string{"run", "--config", cfg, "--suites", suitesDir(t),
		"--provider", "claude,main/m0,claude/a", "--prompt", "triage"}, &out, &errOut)
	if err != nil && !errors.Is(err, errConformanceFailed) {
		t.Fatalf("err = %v\n%s%s", err, out.String(), errOut.String())
	}
	rows, qerr := db.Pool.Query(ctx, "SELECT provider FROM conformance_runs WHERE prompt = 'triage' ORDER BY provider")
	if qerr != nil {
		t.Fatal(qerr)
	}
	var got []string
	for rows.Next() {
		var p string
		if err := rows.Scan(&p); err != nil {
			t.Fatal(err)
		}
		got = append(got, p)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if want := []string{"claude/a", "claude/b", "main"}; !slices.Equal(got, want) {
		t.Fatalf("runs stored for %v, want one for each of %v:\n%s%s", got, want, out.String(), errOut.String())
	}
}

// A name that is neither a provider nor a target id is still refused (exit
// 2), and so is a provider that has no target at all, saying why.
func TestConformanceProviderNameRefusals(t *testing.T) {
	dir := t.TempDir()
	prompts, _ := filepath.Abs("../../prompts")
	cfg := filepath.Join(dir, "router.yaml")
	if err := os.WriteFile(cfg, []byte(`database_url: postgres://127.0.0.1:1/unused
prompts_dir: `+prompts+`
log: {level: error}
providers:
  - {name: main, type: scripted, model: m0}
  - {name: oai, type: openai, base_url: "http://127.0.0.1:9/v1"}
  - {name: spare, type: openai, base_url: "http://127.0.0.1:9/v1"}
routes:
  default:
    targets:
      - {provider: main, model: m0}
      - {provider: oai, model: gpt-4o}
`), 0o600); err != nil {
		t.Fatal(err)
	}
	for flag, want := range map[string]string{
		"nope":     "--provider nope: not among the providers and route targets",
		"main/m1":  "--provider main/m1: not among the providers and route targets",
		"oai/gpt5": "--provider oai/gpt5: not among the providers and route targets",
		"spare":    "--provider spare: provider spare has no model of its own and no route sends to it",
	} {
		var out, errOut bytes.Buffer
		err := conformanceCommand(context.Background(), []string{"run", "--config", cfg, "--suites", suitesDir(t),
			"--provider", flag, "--prompt", "triage"}, &out, &errOut)
		if !errors.Is(err, errUsage) || !strings.Contains(err.Error(), want) {
			t.Errorf("--provider %s: err = %v, want a usage error saying %q", flag, err, want)
		}
	}
}
