package server

import (
	"strings"
	"testing"

	"github.com/routerhq/router/internal/config"
)

// docs/configuration.md: "At start, a message about an empty variable names
// the setting … and shows the variable's name only when it is conventional:
// capitals, digits and _, starting with a capital, at most 64 characters."
// staticKeys, operatorKey and buildAdapter say so through config.EnvRef; the
// webhook secrets' messages (configWebhooks) printed secret_env as written. A
// secret pasted in place of the name that passes the load's checks (a valid
// variable name without a secret's shape: lower case and digits, under 20
// characters) was then printed at every start, where the same value as a
// key_env is not. Found by review.
func TestWebhookSecretEnvMessagesHideUnconventionalNames(t *testing.T) {
	const pasted = "x7k2m9p4q1w8e5rz" // loads: a variable name, not secret-shaped
	y := "api_keys:\n  - {owner: acme, key_env: ACME_KEY, webhook: {url: 'https://hooks.example.com/h', secret_env: " + pasted + "}}\n" +
		"providers:\n  - {name: a, type: scripted}\nroutes:\n  r: {providers: [a]}\n"
	t.Setenv("DATABASE_URL", "")
	cfg, err := config.Parse([]byte(y))
	if err != nil {
		t.Fatalf("the configuration does not load: %v", err)
	}
	_, _, _, err = configWebhooks(cfg, func(string) string { return "" })
	if err == nil {
		t.Fatal("an unset webhook secret was accepted")
	}
	if strings.Contains(err.Error(), pasted) {
		t.Errorf("the start-up message shows an unconventional secret_env name (config.EnvRef would not): %v", err)
	}
	// The same value as a key_env is not shown.
	cfg.APIKeys[0].KeyEnv, cfg.APIKeys[0].Webhook = pasted, nil
	if _, err := staticKeys(cfg); err == nil || strings.Contains(err.Error(), pasted) {
		t.Fatalf("staticKeys: %v", err)
	}
}

// The check of values shared across parties (sharedSecrets) names its
// variables the same way: an unconventional name is not shown.
func TestSharedSecretMessagesHideUnconventionalNames(t *testing.T) {
	const pasted = "x7k2m9p4q1w8e5rz"
	cfg := &config.Config{
		APIKeys:   []config.APIKey{{Owner: "acme", KeyEnv: pasted}},
		Providers: []config.Provider{{Name: "openai", Type: "openai", APIKeyEnv: "OPENAI_API_KEY"}},
	}
	err := sharedSecrets(cfg, func(string) string { return "one-value-for-both-0123456789" })
	if err == nil {
		t.Fatal("a tenant's key equal to a provider's was accepted")
	}
	if strings.Contains(err.Error(), pasted) || !strings.Contains(err.Error(), "OPENAI_API_KEY") {
		t.Errorf("want OPENAI_API_KEY named and %s not: %v", pasted, err)
	}
}
