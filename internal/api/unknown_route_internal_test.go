package api

import (
	"strings"
	"testing"
)

// A refused route names the configured ones, and a prompt's own default that
// is missing is not blamed on the caller (omitting "route" would not help).
func TestUnknownRouteSaysWhatIsConfigured(t *testing.T) {
	routes := map[string]bool{"smart": true, "cheap": true}
	asked := unknownRoute("nope", "triage", "nope", routes)
	for _, want := range []string{`route "nope"`, "(cheap, smart)", `omit "route"`} {
		if !strings.Contains(asked, want) {
			t.Errorf("caller's route: %q lacks %q", asked, want)
		}
	}
	dflt := unknownRoute("", "triage", "default", routes)
	for _, want := range []string{`prompt "triage" runs on route "default"`, "cheap, smart", "configuration"} {
		if !strings.Contains(dflt, want) {
			t.Errorf("prompt's default: %q lacks %q", dflt, want)
		}
	}
	if strings.Contains(dflt, `omit "route"`) {
		t.Errorf("prompt's default: %q advises omitting route, which is what the caller did", dflt)
	}
}
