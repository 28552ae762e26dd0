package prompt_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/routerhq/router/internal/prompt"
)

// invoiceWithRules copies the shipped invoice prompt into a temporary prompts
// directory with its rules block replaced, and loads it.
func invoiceWithRules(t *testing.T, rules string) (*prompt.Set, string, error) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "invoice")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"input.schema.json", "output.schema.json", "prompt.yaml"} {
		b, err := os.ReadFile(filepath.Join("../../prompts/invoice", f))
		if err != nil {
			t.Fatal(err)
		}
		if f == "prompt.yaml" {
			s := string(b)
			i := strings.Index(s, "\nrules:")
			if i < 0 {
				t.Fatal("the shipped invoice manifest has no rules block")
			}
			b = []byte(s[:i+1] + rules)
		}
		if err := os.WriteFile(filepath.Join(dir, f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	set, err := prompt.LoadDir(filepath.Dir(dir))
	return set, filepath.Join(dir, "prompt.yaml"), err
}

const invoiceOffByACent = `{"invoice_number":"A-1","currency":"EUR","issue_date":"2024-03-01","due_date":"2024-03-31",
 "line_items":[{"description":"Seats","quantity":3,"unit_price":49.99,"amount":149.98}],"total":149.98}`

// `tolerance: 0` in prompt.yaml means exactly, not the default of one cent.
func TestLoadDir_ToleranceZeroIsExact(t *testing.T) {
	for _, tc := range []struct {
		tolerance string
		pass      bool
	}{{"", true}, {"\n      tolerance: 0.01", true}, {"\n      tolerance: 0", false}} {
		set, _, err := invoiceWithRules(t, "rules:\n  products:\n    - items: /line_items\n      result: amount\n      factors: [quantity, unit_price]"+tc.tolerance+"\n")
		if err != nil {
			t.Fatal(err)
		}
		p, _ := set.Get("invoice", "")
		_, vs := p.Validator().Validate(invoiceOffByACent)
		if (len(vs) == 0) != tc.pass {
			t.Fatalf("tolerance %q: violations %v, want pass=%v", tc.tolerance, vs, tc.pass)
		}
	}
}

// Rules that could never check anything, or could not be checked, are load
// errors naming the file and the rule.
func TestLoadDir_RulesThatCannotMatch(t *testing.T) {
	_, file, err := invoiceWithRules(t, `rules:
  ranges:
    /line_items/quantity: {min: 0}
    /issue_date/year: {min: 2000}
  sums:
    - items: /line_items
      field: description
      total: /total
      tolerance: -1
`)
	var le *prompt.LoadError
	if !errors.As(err, &le) {
		t.Fatalf("want *LoadError, got %v", err)
	}
	for _, want := range []string{
		file + `: rules.ranges[/line_items/quantity]: path "/line_items/quantity": /line_items is an array in the output schema, not an object: name its elements with * or an index (like /line_items/*/quantity)`,
		file + `: rules.ranges[/issue_date/year]: path "/issue_date/year": /issue_date is a string in the output schema, so it has no property "year"`,
		file + `: rules.sums[0].field: field "description" is a string in the output schema; this rule needs a number`,
		file + `: rules.sums[0].tolerance: -1: must be a number, 0 or more`,
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err)
		}
	}
}
