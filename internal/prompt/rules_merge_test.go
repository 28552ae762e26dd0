package prompt_test

import (
	"strings"
	"testing"
)

// Enum values reached through a YAML merge key (<<) were decoded by YAML's
// types, not as written: exactEnums re-read only the keys written in
// rules.enums itself. An unquoted date became a time.Time that no output's
// string equals, so every output failed the rule; a long number was rounded,
// so the listed one was refused. They are read as written wherever YAML puts
// them, with YAML's precedence (a key written beside << wins; in a list of
// merged mappings, the first).
func TestRules_EnumValuesThroughAMergeKeyAreReadAsWritten(t *testing.T) {
	out := `{"type":"object","properties":{"d":{"type":"string"},"n":{"type":"number"}}}`
	for _, c := range []struct {
		rules      string
		pass, fail []string
	}{
		{"  enums:\n    <<: {/d: [2024-01-01]}\n", []string{`{"d":"2024-01-01"}`}, []string{`{"d":"2024-01-02"}`}},
		{"  enums:\n    <<: {/n: [123456789012345678901234567]}\n", []string{`{"n":123456789012345678901234567}`}, []string{`{"n":123456789012345680000000000}`}},
		{"  <<: {enums: {/d: [2024-01-01]}}\n", []string{`{"d":"2024-01-01"}`}, []string{`{"d":"2024-01-02"}`}},
		{"  enums: &e\n    /d: [2024-01-01]\n  ranges:\n    <<: {}\n  equal: []\n  custom: []\n", []string{`{"d":"2024-01-01"}`}, nil},
		{"  enums:\n    <<: [{/d: [2024-01-01]}, {/d: [x], /n: [0x1F]}]\n", []string{`{"d":"2024-01-01","n":31}`}, []string{`{"d":"x"}`}},
		{"  enums:\n    <<: {/d: [x]}\n    /d: [2024-01-01]\n", []string{`{"d":"2024-01-01"}`}, []string{`{"d":"x"}`}},
	} {
		set, _, err := loadOne(t, manifestWith("rules:\n"+c.rules), map[string]string{"out.json": out})
		if err != nil {
			t.Errorf("%s: load: %v", c.rules, err)
			continue
		}
		p, _ := set.Get("p", "")
		for _, o := range c.pass {
			if doc, vs := p.Validator().Validate(o); doc == nil {
				t.Errorf("%s: %s, which the enum lists, is refused: %v", c.rules, o, vs)
			}
		}
		for _, o := range c.fail {
			if doc, _ := p.Validator().Validate(o); doc != nil {
				t.Errorf("%s: %s, which the enum does not list, is accepted", c.rules, o)
			}
		}
	}
}

// A value read as written that is refused (.inf, 010) is refused when it
// comes through a merge key too, naming the enum.
func TestRules_EnumValueThroughAMergeKeyIsCheckedAsWritten(t *testing.T) {
	out := `{"type":"object","properties":{"n":{"type":"number"}}}`
	line := loadProblem(t, manifestWith("rules:\n  enums:\n    <<: {/n: [1, 010]}\n"), map[string]string{"out.json": out}, "rules.enums[/n]")
	if !strings.Contains(line, "010") || !strings.Contains(line, "leading zero") {
		t.Errorf("got %s", line)
	}
}
