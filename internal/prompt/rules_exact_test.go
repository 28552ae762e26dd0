package prompt_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/routerhq/router/internal/prompt"
)

// An unquoted date in an enum is the string as written: YAML reads it as a
// timestamp, which no output's string equalled, so every output failed.
func TestRules_EnumDateValueMatchesTheString(t *testing.T) {
	out := `{"type":"object","properties":{"d":{"type":"string","format":"date"}},"required":["d"]}`
	set, _, err := loadOne(t, manifestWith("rules:\n  enums:\n    /d: [2024-01-01, 2024-12-31]\n"), map[string]string{"out.json": out})
	if err != nil {
		t.Fatalf("load: %v", err)
	}
	p, _ := set.Get("p", "")
	if doc, vs := p.Validator().Validate(`{"d":"2024-01-01"}`); doc == nil {
		t.Fatalf("output whose date is listed in the enum refused: %v", vs)
	}
	if doc, _ := p.Validator().Validate(`{"d":"2024-06-01"}`); doc != nil {
		t.Fatalf("a date the enum does not list is accepted: %s", doc)
	}
}

// A number in an enum keeps every digit written: as a float64,
// 123456789012345678901234567 became 1.2345678901234568e26, so the listed
// number was refused and a different one accepted.
func TestRules_EnumBigNumberAsWritten(t *testing.T) {
	out := `{"type":"object","properties":{"n":{"type":"number"}},"required":["n"]}`
	set, _, err := loadOne(t, manifestWith("rules:\n  enums:\n    /n: [123456789012345678901234567, 0x1F, 1_000, +.5]\n"), map[string]string{"out.json": out})
	if err != nil {
		t.Fatalf("load: %v", err)
	}
	p, _ := set.Get("p", "")
	for _, ok := range []string{"123456789012345678901234567", "31", "1000", "0.5"} {
		if doc, vs := p.Validator().Validate(`{"n":` + ok + `}`); doc == nil {
			t.Errorf("the number %s the enum lists is refused: %v", ok, vs)
		}
	}
	if doc, _ := p.Validator().Validate(`{"n":123456789012345680000000000}`); doc != nil {
		t.Errorf("a number the enum does not list is accepted: %s", doc)
	}
}

// A range bound in prompt.yaml is compared as written.
func TestRules_RangeBoundAsWritten(t *testing.T) {
	out := `{"type":"object","properties":{"n":{"type":"number"}},"required":["n"]}`
	set, _, err := loadOne(t, manifestWith("rules:\n  ranges:\n    /n: {min: 0, max: 100.00000000000000001}\n"), map[string]string{"out.json": out})
	if err != nil {
		t.Fatalf("load: %v", err)
	}
	p, _ := set.Get("p", "")
	for out, pass := range map[string]bool{`{"n":100.00000000000000001}`: true, `{"n":100.00000000000000002}`: false, `{"n":-1e-400}`: false} {
		if doc, vs := p.Validator().Validate(out); (doc != nil) != pass {
			t.Errorf("%s: want pass %v, got violations %v", out, pass, vs)
		}
	}
}

// Values no rule can compare exactly are refused at load, naming the field
// and saying how to write them.
func TestRules_ValuesRefusedAtLoad(t *testing.T) {
	out := `{"type":"object","properties":{"n":{"type":"number"}},"required":["n"]}`
	for rules, want := range map[string]string{
		"  enums:\n    /n: [1, .inf]\n":    "rules.enums[/n]: line 10: value `.inf` is infinite",
		"  enums:\n    /n: [.nan]\n":       "rules.enums[/n]: line 10: value `.nan` is not a number",
		"  enums:\n    /n: [007]\n":        "rules.enums[/n]: line 10: value `007` has a leading zero",
		"  ranges:\n    /n: {min: .inf}\n": "rules.ranges[/n]: no number is within min +Inf",
		"  ranges:\n    /n: {min: 010}\n":  "rules.ranges./n.min: line 10: value `010` has a leading zero",
	} {
		t.Run(rules, func(t *testing.T) {
			_, _, err := loadOne(t, manifestWith("rules:\n"+rules), map[string]string{"out.json": out})
			var le *prompt.LoadError
			if !errors.As(err, &le) {
				t.Fatalf("want a LoadError, got %v", err)
			}
			got := fmt.Sprint(le.Problems)
			if !strings.Contains(got, want) {
				t.Fatalf("problems %s\nwant one saying %q", got, want)
			}
		})
	}
}

// Enum numbers and range bounds that a float64 holds exactly keep the digest
// they had when YAML decoded them as float64s (pinned: computed before the
// change), however they are written, so that no conformance run recorded
// for such a prompt goes stale.
func TestRules_ExactValuesKeepTheDigest(t *testing.T) {
	out := `{"type":"object","properties":{"n":{"type":"number"},"m":{"type":"number"}},"required":["n"]}`
	const pinned = "df88f80757c677b349763ab5ec2fb3a22567b9df60305b64eb675d9edaf2bf65"
	for _, rules := range []string{
		"  enums:\n    /n: [1.50, 1e6, 7.0, 0x1F, 123456789]\n  ranges:\n    /m: {min: 0.50, max: 1e3}\n",
		"  enums:\n    /n: [1.5, 1000000, 7, 31, 123_456_789]\n  ranges:\n    /m: {min: .5, max: 1000.0}\n",
	} {
		set, _, err := loadOne(t, manifestWith("rules:\n"+rules), map[string]string{"out.json": out})
		if err != nil {
			t.Fatalf("load: %v", err)
		}
		p, _ := set.Get("p", "")
		if p.Digest != pinned {
			t.Errorf("digest %s, want %s, with\n%s", p.Digest, pinned, rules)
		}
	}
}
