package config

import (
	"strings"
	"testing"
	"time"
)

func TestLifecycleDefaults(t *testing.T) {
	t.Setenv("DATABASE_URL", "")
	c, err := Parse(nil)
	if err != nil {
		t.Fatal(err)
	}
	if c.Retention.Jobs.D() != 720*time.Hour || c.Auth.CacheTTL.D() != 5*time.Second || c.Webhooks.RetryFor.D() != 24*time.Hour ||
		c.Webhooks.Timeout.D() != 10*time.Second || c.Webhooks.MaxResponseBytes != 64<<10 || c.Retention.LeaderLease.D() != 15*time.Second {
		t.Fatalf("defaults: %+v %+v %+v", c.Retention, c.Auth, c.Webhooks)
	}
	c, err = Parse([]byte("auth: {cache_ttl: 0s}\n"))
	if err != nil || c.Auth.CacheTTL.D() != 0 {
		t.Fatalf("an explicit 0s cache TTL: %v %v", c.Auth.CacheTTL, err)
	}
}

func TestWebhookURLsAreValidatedAtLoad(t *testing.T) {
	t.Setenv("DATABASE_URL", "")
	good := "api_keys:\n  - owner: acme\n    key_env: K\n    webhook: {url: 'https://hooks.example.com/router', secret_env: S}\n"
	if _, err := Parse([]byte(good)); err != nil {
		t.Fatalf("a good webhook: %v", err)
	}
	for url, want := range map[string]string{
		"ftp://x.example/hook":         "https://",
		"/relative":                    "https://",
		"https://":                     "no host",
		"https://user:pw@x.example/h":  "credentials",
		"https://x.example/h#fragment": "fragment",
		"":                             "is required",
	} {
		y := "api_keys:\n  - owner: acme\n    key_env: K\n    webhook: {url: '" + url + "', secret_env: S}\n"
		_, err := Parse([]byte(y))
		if err == nil || !strings.Contains(err.Error(), "api_keys[0].webhook.url") || !strings.Contains(err.Error(), want) {
			t.Fatalf("url %q: err=%v, want it to name the field and say %q", url, err, want)
		}
	}
	_, err := Parse([]byte("api_keys:\n  - owner: acme\n    key_env: K\n    webhook: {url: 'https://x.example/h'}\n"))
	if err == nil || !strings.Contains(err.Error(), "secret_env is required") {
		t.Fatalf("missing secret_env: %v", err)
	}
	_, err = Parse([]byte("webhooks: {retry_for: 1h}\n"))
	if err == nil || !strings.Contains(err.Error(), "at least a day") {
		t.Fatalf("short retry window: %v", err)
	}
}
