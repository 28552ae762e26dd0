package api

import (
	"strings"
	"testing"

	"github.com/routerhq/router/internal/contract"
)

// A resolution's result that fails more checks than a violation list keeps
// (contract.MaxViolations) is not said to fail "101 check(s)": the list's last
// entry counts the ones left out, and the detail says so.
func TestResolveDetailCountsATruncatedListAsMore(t *testing.T) {
	vs := make([]contract.Violation, 0, contract.MaxViolations+1)
	for range contract.MaxViolations {
		vs = append(vs, contract.Violation{Rule: "type", Path: "/items/0", Message: "want object"})
	}
	vs = append(vs, contract.Violation{Rule: contract.RuleTruncated, Path: "$", Message: "50 more violations not listed (only the first 100 are kept)"})
	got := failsChecks(vs)
	if !strings.Contains(got, "more than 100 checks") || !strings.Contains(got, "50 more") || strings.Contains(got, "101") {
		t.Fatalf("detail %q, want it to say more than 100 checks with the count left out", got)
	}
	if got := failsChecks(vs[:2]); !strings.HasPrefix(got, "the result fails 2 check(s); first: ") {
		t.Fatalf("detail of a short list %q", got)
	}
}
