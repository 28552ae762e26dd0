package config

import (
	"strings"
	"testing"
)

// A fixed hedge_after at or past the primary's first-byte deadline never
// hedges: the silent primary becomes unknown first, which blocks every new
// attempt. Refused at load, saying what to set. Found by review.
func TestFixedHedgeAfterBelowThePrimarysFirstByteDeadline(t *testing.T) {
	t.Setenv("DATABASE_URL", "")
	const base = `
providers:
  - {name: a, type: openai, base_url: "http://127.0.0.1:1/v1", model: m, timeout: 60s, first_byte_timeout: 20s}
  - {name: s, type: scripted, timeout: 2s}
routes:
`
	for _, c := range []struct{ route, want string }{
		{"  default: {targets: [{provider: a}, {provider: s}], hedge_after: 20s}", "hedge_after (20s) is not below the primary's first_byte_timeout (20s, provider a)"},
		{"  default: {targets: [{provider: s}, {provider: a}], hedge_after: 3s}", "hedge_after (3s) is not below the primary's timeout (2s, provider s)"},
	} {
		_, err := Parse([]byte(base + c.route + "\n"))
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "set hedge_after below it") {
			t.Errorf("%s: %v", c.route, err)
		}
	}
	for _, route := range []string{
		"  default: {targets: [{provider: a}, {provider: s}], hedge_after: 5s}",
		"  default: {targets: [{provider: a}, {provider: s}], hedge_after: adaptive}",
	} {
		if _, err := Parse([]byte(base + route + "\n")); err != nil {
			t.Errorf("%s refused: %v", route, err)
		}
	}
}
