package netredact

import (
	"net/url"
	"strings"
	"testing"
)

// A webhook URL whose path is its credential (Slack, Discord, a catch-all
// service's uuid) was shown whole: URL hides user information and query
// secrets only. WebhookURL shows its path up to the first segment, and that
// one only when it reads as a word; the query as URL does.
func TestWebhookURLHidesThePathPastItsFirstSegment(t *testing.T) {
	for raw, want := range map[string]string{
		"https://hooks.slack.com/services/T0001ABCD/B0002EFGH/XyZsecretTOKEN1234567890": "https://hooks.slack.com/services/…",
		"https://discord.com/api/webhooks/112233445566778899/AbCdEfSecretToken_-123":    "https://discord.com/api/…",
		"https://webhook.site/6f1c2a9e-0d1b-4c55-9a7e-2b8c1d4e5f60":                     "https://webhook.site/…",
		"https://hook.eu1.make.com/abcdefghij0123456789klmnopqrstuv":                    "https://hook.eu1.make.com/…",
		"https://u:p@acme.example:8443/hooks/1a2b3c4d5e6f7a8b?token=SECRET12345&v=2#x":  "https://acme.example:8443/hooks/…?token=…&v=2#…",
		"https://acme.example/hook":         "https://acme.example/hook",
		"https://acme.example/hook/":        "https://acme.example/hook/",
		"https://acme.example/v1/jobs":      "https://acme.example/v1/…",
		"https://acme.example":              "https://acme.example",
		"https://acme.example/":             "https://acme.example/",
		"https://acme.example/a%20b/secret": "https://acme.example/a%20b/…",
		// Without // or without a scheme (refused at load, and shown then).
		"hooks.slack.com/services/T0001ABCD/B0002EFGH/XyZsecretTOKEN1234567890":       "hooks.slack.com/…",
		"https:hooks.slack.com/services/T0001ABCD/B0002EFGH/XyZsecretTOKEN1234567890": "https:hooks.slack.com/…",
	} {
		u, err := url.Parse(raw)
		if err != nil {
			t.Fatal(err)
		}
		if got := WebhookURL(u); got != want {
			t.Errorf("WebhookURL(%s) = %s, want %s", raw, got, want)
		}
		if got := WebhookURLText(raw); got != want {
			t.Errorf("WebhookURLText(%s) = %s, want %s", raw, got, want)
		}
	}
	for _, secret := range []string{"XyZsecretTOKEN", "AbCdEfSecretToken", "6f1c2a9e", "B0002EFGH"} {
		for _, raw := range []string{"https://hooks.slack.com/services/T0001ABCD/B0002EFGH/XyZsecretTOKEN1234567890",
			"https://discord.com/api/webhooks/112233445566778899/AbCdEfSecretToken_-123",
			"https://webhook.site/6f1c2a9e-0d1b-4c55-9a7e-2b8c1d4e5f60"} {
			if got := WebhookURLText(raw); strings.Contains(got, secret) {
				t.Errorf("WebhookURLText(%s) = %s: shows %s", raw, got, secret)
			}
		}
	}
	if got := WebhookURLText("https://h/%zz/XyZsecretTOKEN"); strings.Contains(got, "XyZsecretTOKEN") || strings.Contains(got, "%zz") {
		t.Errorf("a URL that does not parse is shown as %q", got)
	}
}
