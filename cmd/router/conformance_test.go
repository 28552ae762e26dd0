package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/routerhq/router/conformance"
	"github.com/routerhq/router/internal/prompt"
	"github.com/routerhq/router/internal/store"
	"github.com/routerhq/router/internal/testdb"
)

func TestMain(m *testing.M) { testdb.Main(m) }

// writeConfig writes a router.yaml for the test database with the given
// providers section and returns its path.
func writeConfig(t *testing.T, db *testdb.DB, providers string) string {
	t.Helper()
	t.Setenv("DATABASE_URL", db.URL) // the environment wins over the file (as `make test` sets it)
	prompts, _ := filepath.Abs("../../prompts")
	cfg := fmt.Sprintf(`database_url: %q
prompts_dir: %q
log: {level: error}
providers:
%s
routes:
  default:
    providers: [%s]
conformance: {max_age: 168h, gate: fallbacks}
`, db.URL, prompts, providers, firstProvider(providers))
	path := filepath.Join(t.TempDir(), "router.yaml")
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func firstProvider(providers string) string {
	_, rest, _ := strings.Cut(providers, "name: ")
	name, _, _ := strings.Cut(rest, "\n")
	return strings.TrimSpace(name)
}

func suitesDir(t *testing.T) string {
	d, err := filepath.Abs("../../conformance/suites")
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// Acceptance 4: a failing run exits non-zero, through the same path as the
// binary's main.
func TestConformanceRunFailingExitsNonZero(t *testing.T) {
	db := testdb.New(t, store.Options{})
	cfg := writeConfig(t, db, `  - name: always-technical
    type: scripted
    script:
      - output: '{"category":"technical","priority":"high","summary":"Customer cannot log in since the reset link expired.","needs_human":false}'`)
	ctx := context.Background()
	var out, errOut bytes.Buffer
	err := conformanceCommand(ctx, []string{"run", "--config", cfg, "--suites", suitesDir(t), "--prompt", "triage"}, &out, &errOut)
	if !errors.Is(err, errConformanceFailed) {
		t.Fatalf("err = %v, want errConformanceFailed\n%s", err, out.String())
	}
	for _, want := range []string{"PROVIDER", "always-technical", "triage@3", "FAIL",
		`✗ refund-double-charge: expect.equal at /category: got "technical", want "billing"`} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	if strings.Contains(out.String(), "\r") {
		t.Error("progress written to a non-terminal")
	}
	// The exit code main gives it.
	if code := run(ctx, []string{"conformance", "run", "--config", cfg, "--suites", suitesDir(t), "--prompt", "triage"}); code != 1 {
		t.Fatalf("exit code %d, want 1", code)
	}
	if code := run(ctx, []string{"conformance", "run", "--bogus"}); code != 2 {
		t.Fatalf("bad flag: exit code %d, want 2", code)
	}
	if code := run(ctx, []string{"conformance", "run", "--config", cfg, "--suites", suitesDir(t), "--provider", "nope"}); code != 2 {
		t.Fatalf("unknown provider: exit code %d, want 2 (a bad flag)", code)
	}
	var n int
	if err := db.Pool.QueryRow(ctx, "SELECT count(*) FROM conformance_runs WHERE NOT passed AND provider = 'always-technical'").Scan(&n); err != nil || n != 2 {
		t.Fatalf("%d failing runs stored (%v), want 2", n, err)
	}
}

// A passing run against an OpenAI-compatible server exits 0; --json prints the
// report.
func TestConformanceRunPassingJSON(t *testing.T) {
	db := testdb.New(t, store.Options{})
	// The server answers every case with its suite's reference reply.
	refs := referenceByInput(t)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Messages []struct{ Content string } `json:"messages"`
		}
		_ = json.NewDecoder(r.Body).Decode(&req)
		content, ok := refs[req.Messages[len(req.Messages)-1].Content]
		if !ok {
			http.Error(w, `{"error":{"message":"unknown case"}}`, http.StatusBadRequest)
			return
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"id": "chatcmpl-1", "object": "chat.completion", "created": 1700000000, "model": "gpt-4o-mini",
			"choices": []any{map[string]any{"index": 0, "message": map[string]any{"role": "assistant", "content": content}, "finish_reason": "stop"}},
			"usage":   map[string]int{"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}})
	}))
	defer srv.Close()
	cfg := writeConfig(t, db, fmt.Sprintf(`  - name: mock-openai
    type: openai
    base_url: %s/v1
    model: gpt-4o-mini
    stream: false # the mock answers plain JSON only
    max_retries: 0`, srv.URL))
	var out, errOut bytes.Buffer
	if err := conformanceCommand(context.Background(), []string{"run", "--config", cfg, "--suites", suitesDir(t), "--json"}, &out, &errOut); err != nil {
		t.Fatalf("err = %v\n%s\n%s", err, out.String(), errOut.String())
	}
	var rep struct {
		Passed  bool `json:"passed"`
		Results []struct {
			Provider, Prompt string
			Passed           bool
			CasesPassed      int `json:"cases_passed"`
			RunID            int64
		} `json:"results"`
	}
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		t.Fatalf("--json output: %v\n%s", err, out.String())
	}
	if !rep.Passed || len(rep.Results) != 2 || !rep.Results[0].Passed || rep.Results[0].CasesPassed < 8 {
		t.Fatalf("report: %s", out.String())
	}
}

// referenceByInput renders every suite case and maps its last message to its
// reference reply.
func referenceByInput(t *testing.T) map[string]string {
	t.Helper()
	ps, err := loadPromptsForTest()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, p := range ps.All() {
		for _, c := range mustSuites(t)[p.Name].Cases {
			msgs, err := p.Render(c.InputJSON())
			if err != nil {
				t.Fatal(err)
			}
			out[msgs[len(msgs)-1].Content] = c.ReferenceJSON()
		}
	}
	return out
}

func loadPromptsForTest() (*prompt.Set, error) { return prompt.LoadDir("../../prompts") }

func mustSuites(t *testing.T) conformance.Suites {
	t.Helper()
	ss, err := conformance.LoadDir("../../conformance/suites")
	if err != nil {
		t.Fatal(err)
	}
	return ss
}

// TestConformanceTemperatureOutOfRange: --temperature takes a number from 0
// to 2, and NaN or an infinity is no such number (strconv.ParseFloat accepts
// both, and a NaN compares false with either bound).
func TestConformanceTemperatureOutOfRange(t *testing.T) {
	for _, v := range []string{"NaN", "+Inf", "-1", "2.5", "warm"} {
		var stdout, stderr bytes.Buffer
		err := conformanceCommand(context.Background(), []string{"run", "--temperature", v}, &stdout, &stderr)
		if !errors.Is(err, errUsage) || !strings.Contains(stderr.String(), "is not a number from 0 to 2") {
			t.Errorf("--temperature %s: err %v, stderr %q; want a usage error naming the range", v, err, stderr.String())
		}
	}
}
