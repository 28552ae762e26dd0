package config

import (
	"strings"
	"testing"
)

// A gateway's key in base_url's query (?key=…) was repeated in the
// messages refusing that base_url (u.String() kept the query), which are
// printed and logged at start-up. Long query values are shown as … now; a
// version (Azure's api-version) and short values stay readable. Found by
// review.
func TestBaseURLQuerySecretIsNotRepeated(t *testing.T) {
	t.Setenv("DATABASE_URL", "")
	const secret = "gw-secret-value-123"
	for _, c := range []struct {
		base, typ string
		wants     []string
	}{
		{"ftp://proxy.internal/v1?key=" + secret, "openai", []string{"\"ftp://proxy.internal/v1?key=…\" is not an absolute http:// or https:// URL"}},
		{"https://user:pw@proxy.internal/v1?key=" + secret + "&api-version=2024-10-21", "openai",
			[]string{"\"https://proxy.internal/v1?key=…&api-version=2024-10-21\" (query values shown as …)"}},
		{"https://proxy.internal/v1?key=" + secret + "&t=a#frag", "openai", []string{"\"https://proxy.internal/v1?key=…&t=a\" has a fragment"}},
		{"https://proxy.internal/anthropic/v1?key=" + secret, "anthropic",
			[]string{"use https://proxy.internal/anthropic?key=… (with your query's values where it shows …)"}},
	} {
		y := "providers:\n  - {name: a, type: " + c.typ + ", base_url: \"" + c.base + "\", model: m}\n"
		mustRefuse(t, y, c.wants...)
		if _, err := Parse([]byte(y)); err != nil && strings.Contains(err.Error(), secret[:8]) {
			t.Errorf("%s: the refusal repeats the query's secret: %v", c.base, err)
		}
	}
}
