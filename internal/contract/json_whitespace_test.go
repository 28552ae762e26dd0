package contract_test

import (
	"strings"
	"testing"
)

// Only JSON's whitespace (space, tab, CR, LF) is trimmed around an answer or
// inside its fence: an answer with another space around its JSON does not
// parse in the caller's JSON reader, so it is json.syntax, not trimmed away.
func TestValidateTrimsOnlyJSONWhitespace(t *testing.T) {
	val := loadExample(t, "triage")
	for _, ok := range []string{" \t\r\n" + triageOK + "\n\r\t ", "```json \r\n" + triageOK + "\r\n```\r\n"} {
		if _, vs := val.Validate(ok); vs != nil {
			t.Errorf("%q: %v", ok, vs)
		}
	}
	for _, space := range []string{"\u00a0", "\u0085", "\u2028", "\u2029", "\u3000", "\v", "\f", "\u1680", "\u2000", "\u202f", "\u205f"} {
		for _, out := range []string{
			triageOK + space,
			space + triageOK,
			"```json\n" + triageOK + space + "\n```",
			"```json" + space + "\n" + triageOK + "\n```",
		} {
			_, vs := val.Validate(out)
			if len(vs) != 1 || vs[0].Rule != "json.syntax" || vs[0].Path != "$" {
				t.Errorf("%q: %v, want one json.syntax at $", out, vs)
			}
		}
	}
	if !strings.Contains(triageOK, `"summary"`) {
		t.Fatal("triageOK changed")
	}
}
