package config

import (
	"strings"
	"testing"
)

// A limits.burst without a request rate was accepted and limited nothing:
// the token bucket exists only for a rate above 0. It is refused now, at the
// top level and per owner, minding inheritance: a burst takes effect with a
// rate written at the other level.
func TestBurstWithoutARateIsRefused(t *testing.T) {
	t.Setenv("DATABASE_URL", "")
	for _, c := range []struct{ yaml, want string }{
		{"limits: {burst: 10}\n", "limits.burst (10) needs limits.requests_per_second: without a rate (requests_per_second is left out)"},
		{"limits: {requests_per_second: 0, burst: 10}\n", "limits.burst (10) needs limits.requests_per_second: without a rate (requests_per_second is 0, unlimited, in limits)"},
		{"limits: {burst: 10}\napi_keys:\n  - {owner: acme, key_env: A, limits: {max_live_jobs: 5}}\n", "limits.burst (10) needs limits.requests_per_second"},
		{"api_keys:\n  - {owner: acme, key_env: A, limits: {burst: 5}}\n",
			"api_keys[0].limits.burst (5) needs a requests_per_second: owner acme has no rate (left out here and in the top-level limits)"},
		{"limits: {requests_per_second: 5}\napi_keys:\n  - {owner: acme, key_env: A, limits: {requests_per_second: 0, burst: 5}}\n",
			"api_keys[0].limits.burst (5) needs a requests_per_second: owner acme has no rate (requests_per_second is 0, unlimited, in api_keys[0].limits)"},
		{"limits: {requests_per_second: 0}\napi_keys:\n  - {owner: acme, key_env: A, limits: {burst: 5}}\n",
			"owner acme has no rate (requests_per_second is 0, unlimited, in the top-level limits)"},
	} {
		mustRefuse(t, c.yaml, c.want, "remove burst")
	}
	// Out of range, as before.
	mustRefuse(t, "limits: {requests_per_second: 5, burst: -1}\n", "limits.burst must be 0 (the rate rounded up) or more")
	mustRefuse(t, "limits: {requests_per_second: -1}\n", "limits.requests_per_second must be 0 (unlimited) or more")
	for _, ok := range []string{
		"limits: {requests_per_second: 5, burst: 10}\n",
		"limits: {burst: 0}\n", // the default burst, whatever the rate
		"limits: {requests_per_second: 5}\napi_keys:\n  - {owner: acme, key_env: A, limits: {burst: 10}}\n",
		// The top-level burst is acme's, with acme's rate.
		"limits: {burst: 10}\napi_keys:\n  - {owner: acme, key_env: A, limits: {requests_per_second: 5}}\n",
		// The top-level burst takes effect for every owner but acme.
		"limits: {requests_per_second: 5, burst: 10}\napi_keys:\n  - {owner: acme, key_env: A, limits: {requests_per_second: 0}}\n",
	} {
		if _, err := Parse([]byte(ok)); err != nil {
			t.Errorf("refused:\n%s%v", ok, err)
		}
	}
}

// stream on a scripted provider changed nothing (the scripted adapter answers
// the same streamed or not) and was accepted; it is refused now. Left out or
// false (what runs) it passes, and other types keep it.
func TestStreamOnAScriptedProviderIsRefused(t *testing.T) {
	t.Setenv("DATABASE_URL", "")
	mustRefuse(t, "providers:\n  - {name: s, type: scripted, stream: true}\n",
		"providers[0] (s).stream: a scripted provider answers with its script's whole output whether streamed or not", "remove stream")
	for _, ok := range []string{
		"providers:\n  - {name: s, type: scripted}\n",
		"providers:\n  - {name: s, type: scripted, stream: false}\n",
		"providers:\n  - {name: o, type: openai, base_url: \"http://127.0.0.1:8000/v1\", model: m, stream: true}\n",
		"providers:\n  - {name: a, type: anthropic, api_key_env: K, model: m, stream: false}\n",
	} {
		if _, err := Parse([]byte(ok)); err != nil {
			t.Errorf("refused:\n%s%v", ok, err)
		}
	}
}

// max_tokens is sent by the Anthropic adapter only; on an openai (or scripted)
// provider it was accepted and never sent. It is refused there now, saying
// that for openai the caller's max_tokens goes per request.
func TestMaxTokensIsForAnthropicOnly(t *testing.T) {
	t.Setenv("DATABASE_URL", "")
	mustRefuse(t, "providers:\n  - {name: o, type: openai, base_url: \"http://127.0.0.1:8000/v1\", model: m, max_tokens: 1000}\n",
		"providers[0] (o).max_tokens (1000) applies to type anthropic only", "sends the caller's max_tokens as given, per request", "remove max_tokens")
	mustRefuse(t, "providers:\n  - {name: s, type: scripted, max_tokens: 1000}\n",
		"providers[0] (s).max_tokens (1000) applies to type anthropic only", "remove max_tokens")
	for _, ok := range []string{
		"providers:\n  - {name: a, type: anthropic, api_key_env: K, model: m, max_tokens: 1000}\n",
		"providers:\n  - {name: o, type: openai, base_url: \"http://127.0.0.1:8000/v1\", model: m, max_tokens: 0}\n", // 0: the default, none
	} {
		if _, err := Parse([]byte(ok)); err != nil {
			t.Errorf("refused:\n%s%v", ok, err)
		}
	}
}

// Credentials in a provider's base_url were accepted (a webhook URL with them
// was refused). They are refused now, pointing to api_key_env, and neither
// the password nor a user name (a key may be pasted there) is repeated.
func TestBaseURLWithCredentialsIsRefusedUnshown(t *testing.T) {
	t.Setenv("DATABASE_URL", "")
	const password, key = "hunter2secret", "sk-proj-Zm9vYmFyYmF6"
	for _, c := range []struct{ typ, base string }{
		{"openai", "https://user:" + password + "@api.example.com/v1"},
		{"openai", "http://" + key + "@127.0.0.1:8000/v1"},
		{"openai", "https://" + key + ":" + password + "@api.example.com/v1#x"},
		{"anthropic", "https://user:" + password + "@api.anthropic.com"},
	} {
		y := "providers:\n  - {name: p, type: " + c.typ + ", base_url: \"" + c.base + "\", api_key_env: K, model: m}\n"
		_, err := Parse([]byte(y))
		if err == nil {
			t.Errorf("accepted: %s", c.base)
			continue
		}
		for _, want := range []string{"providers[0] (p).base_url: must not carry credentials", "api_key_env"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("%s: the error does not say %q:\n%v", c.base, want, err)
			}
		}
		if strings.Contains(err.Error(), password) || strings.Contains(err.Error(), key) {
			t.Errorf("%s: the error repeats the credentials:\n%v", c.base, err)
		}
	}
	// A URL refused for another reason does not show them either.
	_, err := Parse([]byte("providers:\n  - {name: p, type: openai, base_url: \"ftp://" + key + "@api.example.com/v1\", api_key_env: K, model: m}\n"))
	if err == nil || strings.Contains(err.Error(), key) {
		t.Errorf("ftp:// with a key as user name: %v", err)
	}
}
