package conformance_test

import (
	"strings"
	"testing"

	"github.com/routerhq/router/conformance"
)

// A suite pointer whose array index has a leading zero or a sign
// (/line_items/01/amount, /line_items/+1/amount) names no element under
// RFC 6901: Check refuses it at load, naming the case and the pointer and
// the index to write, instead of judging element 1.
func TestSuitePointerWithALooseIndexIsRefused(t *testing.T) {
	invoice, _ := loadPrompts(t).Get("invoice", "")
	s, problems := conformance.ParseSuite("suite.yaml", []byte(`prompt: invoice
cases:
  - name: c
    input: {text: "Invoice 7. Total due (USD): $10.00"}
    expect:
      equal: {/line_items/01/amount: 10.00, /line_items/0/amount: 10.00}
      one_of: {/line_items/+1/amount: [10.00]}
      length: {/line_items: 1}
`))
	if s == nil {
		t.Fatalf("parse: %v", problems)
	}
	err := s.Check(invoice)
	for _, want := range []string{
		`case c: expect.equal[/line_items/01/amount]: path "/line_items/01/amount": "01" is not an array index: a JSON pointer (RFC 6901) writes one in decimal, without a sign or a leading zero; write /line_items/1/amount`,
		`case c: expect.one_of[/line_items/+1/amount]: path "/line_items/+1/amount": "+1" is not an array index`,
	} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Check = %v\nwant it to say %q", err, want)
		}
	}
	if err != nil && strings.Contains(err.Error(), "[/line_items/0/amount]") {
		t.Errorf("the RFC 6901 index is refused too:\n%v", err)
	}
}
