package config

import (
	"strings"
	"testing"
)

// A list item written as null (~, null, or a `-` line with nothing after it)
// is refused, naming its line and path: yaml.v3 dropped it without a word,
// so a provider, an API key or a route's fallback was silently missing.
// Found by review.
func TestEmptyListItemsAreRefused(t *testing.T) {
	t.Setenv("DATABASE_URL", "")
	const fix = " is empty: remove the `-` line or write the entry"
	for _, tc := range []struct{ yaml, want string }{
		{"providers:\n  - {name: a, type: scripted}\n  - ~\nroutes:\n  default: {providers: [a]}\n",
			"line 3: providers[1]" + fix},
		{"providers:\n  - {name: a, type: scripted}\n  -\nroutes:\n  default: {providers: [a]}\n",
			"line 3: providers[1]" + fix},
		{"providers:\n  - {name: a, type: scripted}\nroutes:\n  default: {providers: [a]}\napi_keys: [~]\n",
			"line 5: api_keys[0]" + fix},
		{"providers:\n  - {name: a, type: scripted}\n  - {name: b, type: scripted}\nroutes:\n  r: {providers: [a, ~, b]}\n",
			"line 5: routes.r.providers[1]" + fix},
		{"providers:\n  - {name: a, type: scripted}\nroutes:\n  r:\n    providers:\n      - a\n      - null\n",
			"line 7: routes.r.providers[1]" + fix},
	} {
		_, err := Parse([]byte(tc.yaml))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s\nParse: %v\nwant %q", tc.yaml, err, tc.want)
		}
	}
}
