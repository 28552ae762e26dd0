package config

import (
	"strings"
	"testing"
)

// A provider whose base_url is http:// on a public API host that only speaks
// HTTPS (api.openai.com, api.anthropic.com) — an `s` dropped while typing —
// sent its API key in clear over the internet with the first attempt, and
// every attempt after it: the Authorization (or x-api-key) header goes out
// before any redirect to https:// could be answered. It is refused at load,
// naming the provider and saying to write https://. Found by review (rcli10).
func TestPlainHTTPToPublicAPIHostRefused(t *testing.T) {
	t.Setenv("DATABASE_URL", "")
	for _, p := range []string{
		`{name: p, type: openai, base_url: http://api.openai.com/v1, api_key_env: OPENAI_API_KEY, model: gpt-4o-mini}`,
		`{name: p, type: anthropic, base_url: http://api.anthropic.com, api_key_env: ANTHROPIC_API_KEY, model: claude-x}`,
	} {
		cfg := "providers:\n  - " + p + "\nroutes:\n  r: {providers: [p]}\n"
		c, err := Parse([]byte(cfg))
		if err == nil {
			t.Errorf("%s: Parse accepted it (base_url %q): the API key would be sent in clear on every attempt; want it refused",
				p, c.Providers[0].BaseURL)
			continue
		}
		if !strings.Contains(err.Error(), "https") {
			t.Errorf("%s: Parse error %q does not say to use https://", p, err)
		}
	}
}

// The refusal names the provider and gives the https:// URL to write; the
// host and scheme are matched in any case, with a trailing dot, and on port
// 80. Plain http:// to any other host (vLLM, Ollama, a proxy) stays allowed.
func TestPlainHTTPToPublicAPIHostMessage(t *testing.T) {
	t.Setenv("DATABASE_URL", "")
	parse := func(baseURL string) error {
		_, err := Parse([]byte("providers:\n  - {name: p, type: openai, base_url: '" + baseURL + "', api_key_env: OPENAI_API_KEY, model: m}\nroutes:\n  r: {providers: [p]}\n"))
		return err
	}
	for baseURL, want := range map[string]string{
		"http://api.openai.com/v1":                            `providers[0] (p).base_url: http:// to api.openai.com would send the API key in clear with every attempt (and api.openai.com answers only over HTTPS): write https://, "https://api.openai.com/v1"`,
		"HTTP://API.OpenAI.com./v1?k=sk-0123456789abcdefghij": `write https://, "https://API.OpenAI.com./v1?k=…"`,
		"http://api.anthropic.com:80":                         `write https://, "https://api.anthropic.com"`,
	} {
		if err := parse(baseURL); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: Parse = %v; want %q", baseURL, err, want)
		}
	}
	for _, baseURL := range []string{"http://localhost:8000/v1", "http://vllm.internal/v1", "https://api.openai.com/v1", "http://api.openai.com.example/v1"} {
		if err := parse(baseURL); err != nil {
			t.Errorf("%s: Parse = %v; want it accepted", baseURL, err)
		}
	}
}
