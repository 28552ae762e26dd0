package config

import "testing"

// A base_url with a fragment (#…) is refused at load, naming the setting:
// the fragment is never sent, so the URL does not say what the operator
// meant. A query is accepted (the OpenAI-compatible adapter sends it with
// every request: Azure's api-version).
func TestBaseURLWithFragmentIsRefusedAtLoad(t *testing.T) {
	t.Setenv("DATABASE_URL", "")
	for _, base := range []string{"https://x.openai.azure.com/openai/v1#preview", "https://proxy.internal/v1#"} {
		mustRefuse(t, "providers:\n  - {name: a, type: openai, base_url: \""+base+"\", model: m, api_key_env: OPENAI_API_KEY}\n",
			"providers[0] (a).base_url", "has a fragment (#…), which is never sent to the server: remove it")
	}
	ok := "{name: a, type: openai, base_url: \"https://x.openai.azure.com/openai/v1?api-version=preview\", model: m, api_key_env: OPENAI_API_KEY}"
	if _, err := Parse([]byte("providers:\n  - " + ok + "\n")); err != nil {
		t.Errorf("%s refused: %v", ok, err)
	}
}
