package config_test

import (
	"strings"
	"testing"

	"github.com/routerhq/router/internal/config"
)

// A webhook URL that can never be delivered to was accepted at load and by
// `router keys create --webhook-url`: every try then failed (dial: invalid
// port; or a 404 for a path with a pasted trailing space, sent as "%20") for
// webhooks.retry_for, 24 h, before the events were abandoned. Such URLs are
// refused at once, saying what is wrong and how to fix it. Found by review.
func TestWebhookURLThatCannotBeDeliveredIsRefused(t *testing.T) {
	for _, c := range []struct{ url, want string }{
		{"https://hooks.example.com:99999/router", "port 99999, which is not a TCP port (1 to 65535)"},
		{"https://hooks.example.com:0/router", "port 0, which is not a TCP port"},
		{"https://hooks.example.com:123456789012345678901234567890/router", "not a TCP port"},
		{"https://hooks.example.com/router ", `"https://hooks.example.com/router" has white space at its end (pasted with the URL?): remove it; with it no delivery reaches the receiver`},
		{"https://hooks.example.com/router\n", "white space at its end"},
		{" https://hooks.example.com/router", "white space at its start"},
		{"https://hooks.example.com ", "white space at its end"},
		{"https://hooks.example.com/my router", "white space inside it (character 29)"},
		{"https://hooks.example.com/ré router", "white space inside it (character 29)"},
		{"   ", "is blank"},
	} {
		err := config.ValidateWebhookURL(c.url)
		if err == nil {
			t.Errorf("ValidateWebhookURL(%q) = nil: accepted, though no delivery to it can succeed", c.url)
			continue
		}
		if !strings.Contains(err.Error(), c.want) {
			t.Errorf("ValidateWebhookURL(%q) = %v; want it to say %q", c.url, err, c.want)
		}
	}
	for _, u := range []string{"https://hooks.example.com:1/router", "https://hooks.example.com:65535/router",
		"https://hooks.example.com/router%20v2", "http://10.0.0.7:8080/"} {
		if err := config.ValidateWebhookURL(u); err != nil {
			t.Errorf("ValidateWebhookURL(%q) = %v, want it accepted", u, err)
		}
	}
}

// The white space and port messages never show a password the URL holds.
func TestWebhookURLSpaceAndPortMessagesRedactPasswords(t *testing.T) {
	for _, u := range []string{"https://user:hunter2@hooks.example.com/router ", "https://user:hunter2@hooks.example.com:0/router",
		"https://user:hunter2@hooks example.com/router", " https://user:hunter2@hooks.example.com/router"} {
		if err := config.ValidateWebhookURL(u); err == nil || strings.Contains(err.Error(), "hunter2") {
			t.Errorf("ValidateWebhookURL(%q) = %v; want it refused without the password", u, err)
		}
	}
}

// The configuration's check names the entry.
func TestConfiguredWebhookURLWithATrailingSpaceIsRefusedAtLoad(t *testing.T) {
	t.Setenv("DATABASE_URL", "")
	_, err := config.Parse([]byte("api_keys:\n  - owner: acme\n    key_env: K\n    webhook: {url: 'https://hooks.example.com/router ', secret_env: S}\n"))
	if err == nil || !strings.Contains(err.Error(), "api_keys[0].webhook.url") || !strings.Contains(err.Error(), "white space at its end") {
		t.Fatalf("a configured webhook URL with a trailing space: %v; want it refused, naming api_keys[0].webhook.url", err)
	}
}
