package prompt_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/routerhq/router/internal/prompt"
)

// BenchmarkRenderShipped renders the shipped prompts as POST /v1/jobs does
// (RenderParsed over the parsed input), the hot path the work budget sits on.
func BenchmarkRenderShipped(b *testing.B) {
	set, err := prompt.LoadDir("../../prompts")
	if err != nil {
		b.Fatal(err)
	}
	// A prompt with a range, as the doc examples write (no shipped one has
	// one): 50 line items, each with a function call.
	dir := b.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "items"), 0o755); err != nil {
		b.Fatal(err)
	}
	for name, text := range map[string]string{
		"items/prompt.yaml": "name: items\nversion: \"1\"\nmax_tokens: 100\noutput_schema: out.json\nmessages:\n  - role: user\n    content: |\n" +
			"      Answer in JSON. The items:\n      {{ range .items }}- {{ upper .name }}: {{ printf \"%.2f\" .price }}\n      {{ end }}\n",
		"items/out.json": `{"type":"object","properties":{"a":{"type":"string"}}}`,
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	items, err := prompt.LoadDir(dir)
	if err != nil {
		b.Fatal(err)
	}
	itemsInput := `{"items":[` + strings.TrimSuffix(strings.Repeat(`{"name":"widget","price":12.5},`, 50), ",") + `]}`
	for _, c := range []struct{ name, input string }{
		{"items", itemsInput},
		{"triage", `{"subject":"Refund for order 1234","body":"` + strings.Repeat("I was charged twice. ", 40) + `","customer_tier":"pro"}`},
		{"invoice", `{"text":` + mustJSON(strings.Repeat("Widget A  2 x 12.50 = 25.00\n", 40)) + `}`},
	} {
		s := set
		if c.name == "items" {
			s = items
		}
		p, err := s.Get(c.name, "")
		if err != nil {
			b.Fatal(err)
		}
		data, err := p.ParseInput(json.RawMessage(c.input))
		if err != nil {
			b.Fatal(err)
		}
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := p.RenderParsed(data, json.RawMessage(c.input)); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func mustJSON(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
