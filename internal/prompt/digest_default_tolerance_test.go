package prompt_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/routerhq/router/internal/prompt"
)

// invoiceWith loads the shipped invoice prompt with its rules block's text
// old replaced by new.
func invoiceWith(t *testing.T, old, new string) *prompt.Prompt {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "invoice")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"prompt.yaml", "input.schema.json", "output.schema.json"} {
		b, err := os.ReadFile(filepath.Join("../../prompts/invoice", name))
		if err != nil {
			t.Fatal(err)
		}
		text := string(b)
		if name == "prompt.yaml" {
			if !strings.Contains(text, old) {
				t.Fatalf("the invoice prompt lacks %q", old)
			}
			text = strings.Replace(text, old, new, 1)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	set, err := prompt.LoadDir(filepath.Dir(dir))
	if err != nil {
		t.Fatalf("%q → %q: %v", old, new, err)
	}
	p, err := set.Get("invoice", "")
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// Writing a product or sum rule's default tolerance (0.01), in any spelling
// of it, or leaving it out, judges alike, so a conformance run recorded
// against one spelling counts for the others (Prompt.SameContent), both
// ways; the digest recorded is still that of the rules as written (the
// shipped prompts' pinned digests hold). Another tolerance is other content.
func TestDigest_DefaultToleranceWrittenOrNot(t *testing.T) {
	const product = "      factors: [quantity, unit_price]\n"
	const sum = "      total: /total\n      tolerance: 0.01\n"
	shipped := invoiceWith(t, product, product)
	same := map[string]*prompt.Prompt{
		"product's default written":    invoiceWith(t, product, product+"      tolerance: 0.01\n"),
		"product's default as 1e-2":    invoiceWith(t, product, product+"      tolerance: 1e-2\n"),
		"sum's default left out":       invoiceWith(t, sum, "      total: /total\n"),
		"sum's default written 0.0100": invoiceWith(t, sum, "      total: /total\n      tolerance: 0.0100\n"),
	}
	for what, p := range same {
		if !p.SameContent(shipped.Digest) || !shipped.SameContent(p.Digest) {
			t.Errorf("%s: a run recorded for one does not count for the other (digests %s and %s)", what, p.Digest, shipped.Digest)
		}
	}
	for what, p := range map[string]*prompt.Prompt{
		"product's tolerance 0.02": invoiceWith(t, product, product+"      tolerance: 0.02\n"),
		"product's tolerance 0":    invoiceWith(t, product, product+"      tolerance: 0\n"),
		"sum's tolerance 0.02":     invoiceWith(t, sum, "      total: /total\n      tolerance: 0.02\n"),
	} {
		if p.SameContent(shipped.Digest) || shipped.SameContent(p.Digest) {
			t.Errorf("%s: counted as the shipped content, though it judges differently", what)
		}
		for other, q := range same {
			if p.SameContent(q.Digest) {
				t.Errorf("%s: counted as the content with the %s", what, other)
			}
		}
	}
}
