package config

import "testing"

// Names of providers, routes and models are refused when they hold white
// space or a control character (docs/configuration.md), and now an
// invisible format character too (Unicode Cf: a zero-width space, a
// byte-order mark, a right-to-left override), as ValidateOwner refuses for
// owners. Pasted from a web page or a chat with the model id,
// "gpt-4o<U+200B>" loaded; every attempt then asked the provider for a model
// that does not exist, and the target id, metrics label and --provider name
// looked like another's. Found by review.
func TestInvisibleFormatCharactersInNamesAreRefused(t *testing.T) {
	t.Setenv("DATABASE_URL", "")
	for what, y := range map[string]string{
		"model U+200B":         "providers:\n  - {name: openai, type: openai, base_url: 'https://api.openai.com/v1', api_key_env: K, model: \"gpt-4o\u200b\"}\nroutes:\n  r: {providers: [openai]}\n",
		"target model U+FEFF":  "providers:\n  - {name: openai, type: openai, base_url: 'https://api.openai.com/v1', api_key_env: K, model: gpt-4o}\nroutes:\n  r: {targets: [{provider: openai, model: \"\ufeffgpt-4o-mini\"}]}\n",
		"provider name U+202E": "providers:\n  - {name: \"a\u202ebc\", type: scripted}\nroutes:\n  r: {providers: [\"a\u202ebc\"]}\n",
		"route name U+2060":    "providers:\n  - {name: a, type: scripted}\nroutes:\n  \"default\u2060\": {providers: [a]}\n",
		"routes.models U+200B": "providers:\n  - {name: a, type: scripted}\nroutes:\n  r: {providers: [a], models: [\"gpt-4o\u200b\"]}\n",
	} {
		if _, err := Parse([]byte(y)); err == nil {
			t.Errorf("%s: accepted", what)
		}
	}
	// The owner check refuses the same character.
	if err := ValidateOwner("ac\u200bme"); err == nil {
		t.Fatal("ValidateOwner accepts U+200B")
	}
}
