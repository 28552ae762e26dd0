package config

import (
	"strings"
	"testing"
)

// Provider names that --provider's comma-separated list could not name, and
// route names that are empty or could not be typed back, are refused with
// the reason and a name to use instead. Found by review.
func TestProviderAndRouteNamesAreRefused(t *testing.T) {
	t.Setenv("DATABASE_URL", "")
	for _, tc := range []struct{ yaml, want string }{
		{"providers:\n  - {name: \"a,b\", type: scripted}\nroutes:\n  default: {providers: [\"a,b\"]}\n",
			`providers[0].name "a,b": a provider name cannot contain ","`},
		{"providers:\n  - {name: \"a b\", type: scripted}\nroutes:\n  default: {providers: [\"a b\"]}\n",
			`providers[0].name "a b": a provider name cannot contain white space`},
		{"providers:\n  - {name: \"a\\tb\", type: scripted}\nroutes:\n  default: {providers: [\"a\\tb\"]}\n",
			`providers[0].name "a\tb": a provider name cannot contain white space`},
		{"providers:\n  - {name: \"a\\x01\", type: scripted}\nroutes:\n  default: {providers: [\"a\\x01\"]}\n",
			`providers[0].name "a\x01": a provider name cannot contain a control character`},
		{"providers:\n  - {name: a, type: scripted}\nroutes:\n  \"\": {providers: [a]}\n",
			`routes: a route's name is empty ("": only a chat completion with model "" could reach it): give the route a name`},
		{"providers:\n  - {name: a, type: scripted}\nroutes:\n  \"my route\": {providers: [a]}\n",
			`routes: the route name "my route" cannot contain white space`},
		{"providers:\n  - {name: a, type: scripted}\nroutes:\n  \"x,y\": {providers: [a]}\n",
			`routes: the route name "x,y" cannot contain ","`},
	} {
		_, err := Parse([]byte(tc.yaml))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s\nParse: %v\nwant %q", tc.yaml, err, tc.want)
		}
	}
	if _, err := Parse([]byte("providers:\n  - {name: a-b.c_d, type: scripted}\nroutes:\n  default: {providers: [a-b.c_d]}\n")); err != nil {
		t.Errorf("a plain name: %v", err)
	}
}
