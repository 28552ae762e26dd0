package config

import (
	"strings"
	"testing"
)

// docs/configuration.md: the webhook URL must have "a host". A URL whose host
// is only a port names none, and net.Dial reads an empty host as the local
// system: the owner's events would be POSTed to the router's own machine.
// ValidateWebhookURL also checks `router keys create --webhook-url`.
func TestWebhookURLWithAPortButNoHostNameIsRefused(t *testing.T) {
	for _, u := range []string{"https://:8443/hook", "http://:80/", "https://:443"} {
		err := ValidateWebhookURL(u)
		if err == nil {
			t.Errorf("%q accepted: it names no host, and deliveries would go to the router's own machine", u)
			continue
		}
		if !strings.Contains(err.Error(), "no host name") {
			t.Errorf("%q: %v; want the error to say the host name is missing", u, err)
		}
	}
	for _, u := range []string{"https://hooks.example.com:8443/hook", "http://10.0.0.7:80/", "https://[::1]:8443/hook"} {
		if err := ValidateWebhookURL(u); err != nil {
			t.Errorf("%q refused: %v", u, err)
		}
	}
}

// The configuration's check names the entry and the missing host name.
func TestConfiguredWebhookURLWithAPortButNoHostNameIsRefusedAtLoad(t *testing.T) {
	t.Setenv("DATABASE_URL", "")
	_, err := Parse([]byte("api_keys:\n  - owner: acme\n    key_env: K\n    webhook: {url: 'https://:8443/hook', secret_env: S}\n"))
	if err == nil || !strings.Contains(err.Error(), "api_keys[0].webhook.url") || !strings.Contains(err.Error(), "no host name") {
		t.Fatalf("a configured webhook without a host name: %v; want it refused, naming api_keys[0].webhook.url", err)
	}
}
