package contract_test

import (
	"net/netip"
	"testing"
	"time"

	"github.com/routerhq/router/internal/contract"
)

// docs/prompts.md §3: "format is asserted, so "format": "date" rejects
// 01/03/2024" (and docs/chat.md: only an unknown format and "regex" are
// annotations). jsonschema/v5's checkers, used as they are, let through
// values that are not of their format and that the caller's own parser
// refuses: its time check reads each field with strconv.Atoi, which takes a
// sign ("+1", "-0"); its ipv4 check takes a sign and "00"; its hostname check
// looks for a leading '-' only in the first label; its uri check is
// url.Parse, which takes a space. Each answer below passes the contract and
// wins, and the caller's time.Parse(time.RFC3339, …) / netip.ParseAddr /
// IDNA-or-DNS hostname / URI parser fails on it.
func TestFormatAssertionsRefuseWhatIsNotOfTheFormat(t *testing.T) {
	cases := []struct {
		format, value string
		theirs        func(string) error // a strict reader of the format, as a caller has
	}{
		{"date-time", "2024-01-01T+1:+2:+3Z", func(s string) error { _, err := time.Parse(time.RFC3339, s); return err }},
		{"date-time", "2024-03-05T-0:30:00Z", func(s string) error { _, err := time.Parse(time.RFC3339, s); return err }},
		{"time", "+9:00:00Z", func(s string) error { _, err := time.Parse("15:04:05Z07:00", s); return err }},
		{"ipv4", "+1.2.3.4", func(s string) error { _, err := netip.ParseAddr(s); return err }},
		{"ipv4", "00.1.2.3", func(s string) error { _, err := netip.ParseAddr(s); return err }},
		{"hostname", "www.-example.com", nil},   // RFC 1123: a label must not start with '-'
		{"email", "joe@mail.-example.com", nil}, // the domain is not a hostname
		{"uri", "https://example.com/a b", nil}, // RFC 3986: a space is not allowed anywhere in a URI
	}
	for _, c := range cases {
		if c.theirs != nil {
			if err := c.theirs(c.value); err == nil {
				t.Fatalf("premise: %q parses as %s: %v", c.value, c.format, err)
			}
		}
		schema := `{"type":"object","properties":{"v":{"type":"string","format":"` + c.format + `"}},"required":["v"]}`
		v, err := contract.NewValidator([]byte(schema), "out.json", contract.Rules{})
		if err != nil {
			t.Fatal(err)
		}
		if doc, vs := v.Validate(`{"v":"` + c.value + `"}`); len(vs) == 0 {
			t.Errorf("format %s: %q is not a %s, yet the answer passes the contract and wins: %s", c.format, c.value, c.format, doc)
		}
	}
}
