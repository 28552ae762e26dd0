package prompt_test

import (
	"strings"
	"testing"
)

// YAML reads `/currency: [840, 978]` as numbers; the invoice's /currency is
// a string, so the prompt loaded and refused every answer with "enum". The
// manifest is refused instead, naming the rule and how to write the values.
func TestLoadDir_EnumValuesOfATypeTheSchemaForbids(t *testing.T) {
	_, file, err := invoiceWithRules(t, "rules:\n  enums:\n    /currency: [840, 978]\n")
	if err == nil {
		t.Fatal("loaded: /currency is a string in the output schema, and every answer would be refused with `enum`")
	}
	for _, want := range []string{file + ": rules.enums[/currency]: ", `the value 840 (number) can never be at "/currency"`, `quote it`, `"840"`} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%v\nwant it to say %q", err, want)
		}
	}
	if _, _, err := invoiceWithRules(t, "rules:\n  enums:\n    /currency: [\"840\", \"978\"]\n"); err != nil {
		t.Fatalf("quoted: %v", err)
	}
}
