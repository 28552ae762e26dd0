package config

import (
	"strings"
	"testing"
)

// A route whose name YAML reads as null (~:, null:, Null:, NULL:) was
// dropped by the decoder without a word: the route silently did not exist.
// Each is refused with its line, saying to quote or rename it. Found by
// review.
func TestNullRouteNameRefused(t *testing.T) {
	t.Setenv("DATABASE_URL", "")
	for _, name := range []string{"~", "null", "Null", "NULL"} {
		_, err := Parse([]byte(`
providers:
  - {name: s, type: scripted}
routes:
  default: {providers: [s]}
  ` + name + `: {providers: [s]}
`))
		if err == nil {
			t.Errorf("a route named %s (null) was accepted, and dropped", name)
			continue
		}
		for _, want := range []string{
			"line 6: routes: a route's name is null (written " + name + ", which YAML reads as no name)",
			`quote it ("` + name + `") or rename it`,
		} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("route %s: the error does not say %q:\n%v", name, want, err)
			}
		}
	}
}

// A list or a mapping written as a route's name (a complex key) was refused
// only as yaml.v3's "line 6: cannot unmarshal !!seq into string", naming no
// setting; a complex key among the settings of a struct was not named at all.
func TestComplexKeyRefusedWithItsPath(t *testing.T) {
	t.Setenv("DATABASE_URL", "")
	for name, c := range map[string]struct{ yaml, want string }{
		"a route's name": {`
providers:
  - {name: s, type: scripted}
routes:
  default: {providers: [s]}
  ? [a]
  : {providers: [s]}
`, "line 6: routes: a route's name is a list (a complex key"},
		"a setting's name": {`
providers:
  - {name: s, type: scripted}
routes:
  default: {providers: [s], {a: 1}: 2}
`, "line 5: routes.default: a setting's name is a mapping (a complex key"},
	} {
		_, err := Parse([]byte(c.yaml))
		if err == nil {
			t.Errorf("%s: a complex key was accepted", name)
			continue
		}
		if !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "cannot unmarshal") || !strings.Contains(err.Error(), "write the name as text") {
			t.Errorf("%s: the error does not say %q (or still says yaml.v3's words):\n%v", name, c.want, err)
		}
	}
}
