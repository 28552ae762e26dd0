package server

import (
	"strings"
	"testing"

	"github.com/routerhq/router/internal/config"
)

// A webhook secret rotation: previous_secret_env's secret reaches the
// delivery worker beside the new one, and is checked like it — an unset or
// unusable old secret refuses start-up with the variable's name.
func TestConfigWebhooksReadsThePreviousSecret(t *testing.T) {
	const newSecret, old = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", "whsec_b2xkLXNlY3JldC1yb3RhdGVkLW91dC0xMjM0NTY="
	env := map[string]string{"WH_NEW": newSecret, "WH_OLD": old}
	cfg := &config.Config{APIKeys: []config.APIKey{{Owner: "acme", KeyEnv: "K", Webhook: &config.Webhook{
		URL: "https://hooks.example.com/x", SecretEnv: "WH_NEW", PreviousSecretEnv: "WH_OLD"}}}}
	_, secrets, previous, err := configWebhooks(cfg, func(k string) string { return env[k] })
	if err != nil || secrets["acme"] != newSecret || previous["acme"] != old {
		t.Fatalf("secrets %v previous %v err %v; want the new and the old secret of acme", secrets, previous, err)
	}
	for _, v := range []string{"", "short"} {
		env["WH_OLD"] = v
		_, _, _, err = configWebhooks(cfg, func(k string) string { return env[k] })
		if err == nil || !strings.Contains(err.Error(), "api_keys[0].webhook.previous_secret_env: environment variable WH_OLD (owner acme)") {
			t.Errorf("old secret %q: %v; want start-up refused, naming previous_secret_env and WH_OLD", v, err)
		}
	}
	cfg.APIKeys[0].Webhook.PreviousSecretEnv = ""
	_, _, previous, err = configWebhooks(cfg, func(k string) string { return env[k] })
	if err != nil || len(previous) != 0 {
		t.Fatalf("no rotation: previous %v err %v; want none", previous, err)
	}
}

// A signing secret read from a file that ends in a newline (a Kubernetes
// secret made with echo) signs with the secret itself, as API and provider
// keys are read: the newline was part of the HMAC key, and a receiver
// holding the secret rejected every delivery. Found in review.
func TestConfigWebhooksTrimsTheSecrets(t *testing.T) {
	const raw, old = "a-raw-shared-secret-of-32-bytes!", "another-raw-secret-of-32-bytes!!"
	env := map[string]string{"WH_NEW": raw + "\n", "WH_OLD": " " + old + "\r\n"}
	cfg := &config.Config{APIKeys: []config.APIKey{{Owner: "acme", KeyEnv: "K", Webhook: &config.Webhook{
		URL: "https://hooks.example.com/x", SecretEnv: "WH_NEW", PreviousSecretEnv: "WH_OLD"}}}}
	_, secrets, previous, err := configWebhooks(cfg, func(k string) string { return env[k] })
	if err != nil || secrets["acme"] != raw || previous["acme"] != old {
		t.Fatalf("secrets %q previous %q err %v; want both without the white space around them", secrets, previous, err)
	}
}
