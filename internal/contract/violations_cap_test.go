package contract_test

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/routerhq/router/internal/contract"
)

// itemsOfObjects is a schema under which every number in /items is a
// schema.type failure.
const itemsOfObjects = `{"type":"object","properties":{"items":{"type":"array","items":{"type":"object"}}}}`

// numbersArray is {"items":[1,1,...]} with n elements.
func numbersArray(n int) string {
	return `{"items":[` + strings.Repeat(`1,`, n-1) + `1]}`
}

// The violations of one output are stored with its attempt (jsonb), served in
// GET /v1/jobs/{id} and in webhooks. An output within max_response_bytes gave
// millions of them (an 8 MiB array of numbers where objects belong: 4M
// violations, 380 MB of JSON); now the first MaxViolations are listed, by path
// with indexes in numeric order, and one last violation counts the rest.
func TestSchema_ViolationsAreCapped(t *testing.T) {
	val := mustValidator(t, []byte(itemsOfObjects), contract.Rules{})
	out := numbersArray(128 << 10) // 256 KiB
	_, vs := val.Validate(out)
	if len(vs) != contract.MaxViolations+1 {
		t.Fatalf("a %d-byte output gave %d violations; want %d and the truncation marker", len(out), len(vs), contract.MaxViolations+1)
	}
	for i, v := range vs[:contract.MaxViolations] {
		if want := "/items/" + strconv.Itoa(i); v.Rule != "schema.type" || v.Path != want {
			t.Fatalf("violation %d is %v; want schema.type at %s (the first ones by path)", i, v, want)
		}
	}
	last := vs[contract.MaxViolations]
	want := fmt.Sprintf("up to %d more violations not listed (only the first 100 are kept)", 128<<10-contract.MaxViolations)
	if last.Rule != contract.RuleTruncated || last.Path != "$" || last.Message != want {
		t.Fatalf("last violation %+v; want rule %q at $: %q", last, contract.RuleTruncated, want)
	}
	if b, _ := json.Marshal(vs); len(b) > 16<<10 {
		t.Fatalf("the violations are %d bytes of JSON; want a few KiB", len(b))
	}
}

// Below exactSchemaViolations the count of those left out is exact, repeats
// (the same failure through two anyOf branches) removed.
func TestSchema_ViolationsCapCountsExactly(t *testing.T) {
	anyOf := `{"type":"object","properties":{"items":{"type":"array","items":{"anyOf":[{"type":"object"},{"type":"object","minProperties":1}]}}}}`
	for name, schema := range map[string]string{"plain": itemsOfObjects, "repeated through anyOf": anyOf} {
		t.Run(name, func(t *testing.T) {
			val := mustValidator(t, []byte(schema), contract.Rules{})
			_, vs := val.Validate(numbersArray(150))
			if len(vs) != 101 || vs[99].Path != "/items/99" {
				t.Fatalf("got %d violations, the 100th %v; want 100 (the last at /items/99) and the marker:\n%v", len(vs), vs[min(99, len(vs)-1)], vs)
			}
			if m := vs[100]; m.Rule != "truncated" || m.Message != "50 more violations not listed (only the first 100 are kept)" {
				t.Fatalf("marker %+v", m)
			}
			// Exactly MaxViolations: all listed, no marker.
			_, vs = val.Validate(numbersArray(100))
			if len(vs) != 100 || vs[99].Rule == contract.RuleTruncated {
				t.Fatalf("100 failures gave %d violations, last %v", len(vs), vs[len(vs)-1])
			}
		})
	}
}

// Indexes sort by number: /items/2 before /items/10 (byte order put /items/10,
// /items/100, ... first, so a cut list skipped most of the first elements).
func TestSchema_ViolationsSortIndexesByNumber(t *testing.T) {
	val := mustValidator(t, []byte(`{"type":"object","properties":{"items":{"type":"array","items":{"type":"object"}},"a":{"type":"string"},"b":{"type":"object","properties":{"10":{"type":"string"},"9":{"type":"string"},"x":{"type":"string"}}}}}`), contract.Rules{NoExtraKeys: ptr(false)})
	_, vs := val.Validate(`{"b":{"x":1,"10":1,"9":1},"a":1,"items":[1,1,1,1,1,1,1,1,1,1,1,1]}`)
	var got []string
	for _, v := range vs {
		got = append(got, v.Path)
	}
	want := "/a /b/9 /b/10 /b/x /items/0 /items/1 /items/2 /items/3 /items/4 /items/5 /items/6 /items/7 /items/8 /items/9 /items/10 /items/11"
	if strings.Join(got, " ") != want {
		t.Fatalf("paths\n got %s\nwant %s", strings.Join(got, " "), want)
	}
}

// The business rules' violations are capped the same way, in rule order, with
// an exact count.
func TestCheckRules_ViolationsAreCapped(t *testing.T) {
	val := mustValidator(t, []byte(`{"type":"object","properties":{"items":{"type":"array","items":{"type":"string"}}}}`),
		contract.Rules{Enums: map[string][]any{"/items/*": {"a"}}})
	out := `{"items":[` + strings.Repeat(`"b",`, 128<<10) + `"b"]}`
	_, vs := val.Validate(out)
	if len(vs) != contract.MaxViolations+1 || vs[0].Path != "/items/0" || vs[99].Path != "/items/99" {
		t.Fatalf("got %d violations (first %v); want the first 100 enum failures and the marker", len(vs), vs[0])
	}
	want := fmt.Sprintf("%d more violations not listed (only the first 100 are kept)", 128<<10+1-contract.MaxViolations)
	if m := vs[100]; m.Rule != contract.RuleTruncated || m.Path != "$" || m.Message != want {
		t.Fatalf("marker %+v; want %q", m, want)
	}
}

// registerManyViolations registers, once per process (go test -count=N), a Go
// rule that reports 250 violations.
var registerManyViolations = sync.OnceFunc(func() {
	contract.Register("test.many_violations", func(any) []contract.Violation {
		vs := make([]contract.Violation, 250)
		for i := range vs {
			vs[i] = contract.Violation{Path: "/n", Message: "bad " + strconv.Itoa(i)}
		}
		return vs
	})
})

// A Go rule that returns more than MaxViolations is cut too.
func TestCheckRules_CustomRuleViolationsAreCapped(t *testing.T) {
	registerManyViolations()
	val := mustValidator(t, schemaFor(`"n":{"type":"number"}`), contract.Rules{Custom: []string{"test.many_violations"}})
	_, vs := val.Validate(`{"n":1}`)
	if len(vs) != 101 || vs[99].Message != "bad 99" || vs[100].Message != "150 more violations not listed (only the first 100 are kept)" {
		t.Fatalf("got %d violations, ending %v", len(vs), vs[len(vs)-2:])
	}
}
