package prompt_test

import (
	"slices"
	"testing"

	"github.com/routerhq/router/internal/prompt"
)

func idsOf(ps []*prompt.Prompt) []string {
	var out []string
	for _, p := range ps {
		out = append(out, p.Name)
	}
	return out
}

// The prompts the gate judges a route for: those whose route it is (the
// manifest's, "default" when unset), plus the route's conformance_prompt,
// each once.
func TestOfRouteIsTheRoutesPromptsAndItsConformancePrompt(t *testing.T) {
	set := loadExamples(t) // invoice and triage, both on route "default"
	for _, tc := range []struct {
		route, chat string
		want        []string
	}{
		{"default", "", []string{"invoice", "triage"}},
		{"default", "triage", []string{"invoice", "triage"}}, // once, not twice
		{"fast", "", nil},
		{"fast", "triage", []string{"triage"}},
		{"fast", "missing", nil},
	} {
		if got := idsOf(set.OfRoute(tc.route, tc.chat)); !slices.Equal(got, tc.want) {
			t.Errorf("OfRoute(%q, %q) = %v, want %v", tc.route, tc.chat, got, tc.want)
		}
	}
	var none *prompt.Set
	if got := none.OfRoute("default", "triage"); got != nil {
		t.Errorf("a nil Set's OfRoute = %v, want none", idsOf(got))
	}
}
