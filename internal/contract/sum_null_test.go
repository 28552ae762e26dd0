package contract_test

import (
	"strings"
	"testing"

	"github.com/routerhq/router/internal/contract"
)

// In `sums` an item whose field is null or absent adds nothing and the rest
// is still held to the total; a null or absent total is not judged
// (docs/prompts.md).
func TestSumSkipsNullItemsButNotTheTotal(t *testing.T) {
	off := false
	v, err := contract.NewValidator([]byte(`{"type":"object"}`), "", contract.Rules{NoExtraKeys: &off,
		Sums: []contract.SumRule{{Items: "/items", Field: "amount", Total: "/total"}}})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ out, bad string }{
		{`{"items":[{"amount":100},{"amount":200},{"amount":null}],"total":350}`, "off by 50"},
		{`{"items":[{"amount":100},{"amount":200},{}],"total":350}`, "off by 50"},
		{`{"items":[{"amount":100},{"amount":200},{"amount":null}],"total":300}`, ""},
		{`{"items":[{"amount":100},{"amount":200}],"total":null}`, ""},
		{`{"items":[{"amount":100},{"amount":200}]}`, ""},
	} {
		_, vs := v.Validate(c.out)
		var got []string
		for _, x := range vs {
			got = append(got, x.Rule+": "+x.Message)
		}
		switch {
		case c.bad == "" && len(vs) > 0:
			t.Errorf("%s: %v, want no violation", c.out, got)
		case c.bad != "" && (len(vs) != 1 || !strings.Contains(vs[0].Message, c.bad)):
			t.Errorf("%s: %v, want one sum violation %q", c.out, got, c.bad)
		}
	}
}
