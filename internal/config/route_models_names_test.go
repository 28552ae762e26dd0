package config

import (
	"strings"
	"testing"
)

// A route's `models` entry is a model name a chat completion asks for and
// that is passed through to the route's providers; it also names a breaker
// ("provider/model") that /metrics labels and --provider lists select. The
// same name written as a target's model is refused at load when it holds a
// "," (two models written as one), white space or a control character
// (modelNameProblem): the route's models are not checked at all. The most
// likely slip — a block list item written `- gpt-4o, gpt-4o-mini` — loads,
// and every chat completion asking for gpt-4o is then answered 404.
func TestRouteModelsNamesCheckedLikeTargetModels(t *testing.T) {
	t.Setenv("DATABASE_URL", "")
	y := `
database_url: embedded
providers:
  - {name: openai, type: openai, base_url: "http://127.0.0.1:1/v1", model: gpt-4o}
routes:
  smart:
    providers: [openai]
    models:
      - gpt-4o, gpt-4o-mini
      - "gpt-4.1 "
      - "o3\tmini"
`
	_, err := Parse([]byte(y))
	if err == nil {
		t.Fatalf("accepted route models %q, %q and %q, which a target's model refuses", "gpt-4o, gpt-4o-mini", "gpt-4.1 ", "o3\tmini")
	}
	for _, want := range []string{`routes.smart.models`, `"gpt-4o, gpt-4o-mini"`, `"gpt-4.1 "`} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error does not mention %s:\n%v", want, err)
		}
	}
	// For comparison: the same name as a target's model is refused.
	_, err = Parse([]byte(`
database_url: embedded
providers:
  - {name: openai, type: openai, base_url: "http://127.0.0.1:1/v1", model: gpt-4o}
routes:
  smart: {targets: [{provider: openai, model: "gpt-4o, gpt-4o-mini"}]}
`))
	if err == nil || !strings.Contains(err.Error(), `cannot contain ","`) {
		t.Fatalf("the target's model with a comma: %v", err)
	}
}
