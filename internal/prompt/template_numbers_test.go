package prompt_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/routerhq/router/internal/prompt"
)

// A prompt loaded from its directory renders input numbers with printf and
// compares them with gt and ne (the reviewer's case: each used to misrender or
// fail for every input).
func TestRender_TemplateNumbers(t *testing.T) {
	cases := []struct{ tmpl, want string }{
		{`Price: {{ printf "%.2f" .price }}`, "Price: 12.50"},
		{`Qty: {{ printf "%d" .qty }}`, "Qty: 0"},
		{`{{ if gt .qty 10 }}bulk{{ else }}single{{ end }}`, "single"},
		{`{{ if ne .qty 0 }}has items{{ else }}empty{{ end }}`, "empty"},
		{`Price: {{ .price }}`, "Price: 12.50"},
	}
	for _, c := range cases {
		dir := filepath.Join(t.TempDir(), "p")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		files := map[string]string{
			"out.json":    `{"type":"object","properties":{"a":{"type":"string"}}}`,
			"prompt.yaml": "name: p\nversion: \"1\"\nmax_tokens: 10\noutput_schema: out.json\nmessages:\n  - role: user\n    content: '" + c.tmpl + "'\n",
		}
		for n, content := range files {
			if err := os.WriteFile(filepath.Join(dir, n), []byte(content), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		set, err := prompt.LoadDir(filepath.Dir(dir))
		if err != nil {
			t.Fatal(err)
		}
		p, err := set.Get("p", "")
		if err != nil {
			t.Fatal(err)
		}
		msgs, err := p.Render(json.RawMessage(`{"price": 12.50, "qty": 0}`))
		if err != nil {
			t.Errorf("%s: render error: %v", c.tmpl, err)
			continue
		}
		if msgs[0].Content != c.want {
			t.Errorf("%s: rendered %q, want %q", c.tmpl, msgs[0].Content, c.want)
		}
	}
}
