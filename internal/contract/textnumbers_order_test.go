package contract_test

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/routerhq/router/internal/contract"
)

// json.number_range names "the first" number of an answer judged as text that
// is too large to judge; it walked the parsed answer's maps in Go's random
// order, so the same answer was refused at one path on one run and another on
// the next. It is the first in the answer's order, on every run: for a number
// too far from its decimal point, and for the one whose exponent brings the
// answer's total past the bound.
func TestTextNumberRangeNamesTheFirstNumberInTheAnswersOrder(t *testing.T) {
	off := false
	v, err := contract.NewRequestValidator([]byte(`{"type":"object"}`), "s", contract.Rules{NoExtraKeys: &off})
	if err != nil {
		t.Fatal(err)
	}
	keys := []string{"z", "y", "x", "w", "v", "u", "t", "s", "r"} // written in an order that is not sorted
	var far, many []string
	for _, k := range keys {
		far = append(far, fmt.Sprintf("%q:1e200000", k))
		many = append(many, fmt.Sprintf("%q:{\"n\":[1e130000]}", k))
	}
	for _, c := range []struct{ answer, want string }{
		{"{" + strings.Join(far, ",") + "}", "/z"},
		{"{" + strings.Join(many, ",") + "}", "/r/n/0"}, // the ninth 1e130000 passes 1 MiB of exponents
	} {
		seen := map[string]int{}
		for range 64 {
			_, vs := v.ValidateText(c.answer)
			if len(vs) != 1 || vs[0].Rule != "json.number_range" {
				t.Fatalf("ValidateText(%.60s) = %v, want one json.number_range", c.answer, vs)
			}
			seen[vs[0].Path]++
		}
		if len(seen) != 1 || seen[c.want] == 0 {
			t.Errorf("ValidateText(%.60s…) 64 times: json.number_range at %v, want %s every time (the first in the answer's order)", c.answer, slices.Sorted(maps.Keys(seen)), c.want)
		}
	}
}
