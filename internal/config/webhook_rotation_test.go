package config

import (
	"strings"
	"testing"
)

// previous_secret_env (a webhook secret rotation) loads, names a variable, and
// is not secret_env's.
func TestWebhookPreviousSecretEnv(t *testing.T) {
	t.Setenv("DATABASE_URL", "")
	hook := func(prev string) []byte {
		return []byte("api_keys:\n  - owner: acme\n    key_env: K\n    webhook: {url: 'https://hooks.example.com/r', secret_env: S, previous_secret_env: '" + prev + "'}\n")
	}
	c, err := Parse(hook("S_OLD"))
	if err != nil || c.APIKeys[0].Webhook.PreviousSecretEnv != "S_OLD" {
		t.Fatalf("a rotation: %+v %v", c, err)
	}
	for prev, want := range map[string]string{
		"S":                   "previous_secret_env names the same variable as secret_env (S)",
		"whsec_notAName+/x==": "api_keys[0].webhook.previous_secret_env is not the name of an environment variable",
	} {
		if _, err := Parse(hook(prev)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("previous_secret_env %q: %v; want %q", prev, err, want)
		}
	}
}
