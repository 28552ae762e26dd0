package netredact

import (
	"net/url"
	"strings"
	"testing"
)

// A receiver's answer that quotes the request it was sent (Express's default
// 404, Spring Boot's JSON error, a redirect's page) shows the webhook URL's
// secret-bearing parts as WebhookURL shows them, and ordinary words stay.
func TestWebhookTextHidesWhatTheAnswerQuotesOfTheURL(t *testing.T) {
	const slack = "https://hooks.slack.com/services/T024BE7LD/B07R2K7QF/m2zXaQ9kWpLs8vT3nYcE"
	for _, c := range []struct{ url, text, want string }{
		{slack, "Cannot POST /services/T024BE7LD/B07R2K7QF/m2zXaQ9kWpLs8vT3nYcE", "Cannot POST /services/…"},
		{slack, `{"status":404,"error":"Not Found","path":"/services/T024BE7LD/B07R2K7QF/m2zXaQ9kWpLs8vT3nYcE"}`,
			`{"status":404,"error":"Not Found","path":"/services/…"}`},
		{slack, `<a href="/services/T024BE7LD/B07R2K7QF/m2zXaQ9kWpLs8vT3nYcE/">Moved Permanently</a>.`,
			`<a href="/services/…/">Moved Permanently</a>.`},
		{slack, "POST " + slack + " failed", "POST https://hooks.slack.com/services/… failed"},
		// PHP's json_encode writes "\/": each segment on its own.
		{slack, `{"path":"\/services\/T024BE7LD\/B07R2K7QF\/m2zXaQ9kWpLs8vT3nYcE"}`, `{"path":"\/services\/…\/…\/…"}`},
		{slack, "invalid_token m2zXaQ9kWpLs8vT3nYcE", "invalid_token …"},
		// The path escaped and unescaped.
		{"https://acme.example/hooks/a%20b%26c-1234567", "Cannot POST /hooks/a%20b%26c-1234567", "Cannot POST /hooks/…"},
		{"https://acme.example/hooks/a%20b%26c-1234567", "no route for /hooks/a b&c-1234567", "no route for /hooks/…"},
		{"https://acme.example/hooks/a%20b%26c-1234567", "<pre>Cannot POST /hooks/a b&amp;c-1234567</pre>", "<pre>Cannot POST /hooks/…</pre>"},
		// A first segment that reads as no word is hidden too.
		{"https://webhook.site/6f1c2a9e-0d1b-4c55-9a7e-2b8c1d4e5f60", "Cannot POST /6f1c2a9e-0d1b-4c55-9a7e-2b8c1d4e5f60", "Cannot POST /…"},
		// Query values of MinSecret bytes or more, escaped and not; short
		// ones and versions stay.
		{"https://acme.example/hook?token=SECRET%2B12345&v=2&api-version=2024-10-21", "bad token SECRET%2B12345 (SECRET+12345), v=2, api-version=2024-10-21",
			"bad token … (…), v=2, api-version=2024-10-21"},
		// Words of the hidden path stay elsewhere in the text; a short
		// hidden path is hidden only where the path is quoted whole.
		{"https://discord.com/api/webhooks/112233445566778899/AbCdEfSecretToken_-123", "Unknown webhooks: /api/webhooks/112233445566778899/AbCdEfSecretToken_-123",
			"Unknown webhooks: /api/…"},
		{"https://acme.example/v1/jobs", "no jobs at /v1/jobs", "no jobs at /v1/…"},
		// Nothing hidden.
		{"https://acme.example/hook", "Cannot POST /hook", "Cannot POST /hook"},
		{"https://acme.example/", "Cannot POST /", "Cannot POST /"},
	} {
		u, err := url.Parse(c.url)
		if err != nil {
			t.Fatal(err)
		}
		if got := WebhookText(c.text, u, false); got != c.want {
			t.Errorf("WebhookText(%q, %s) = %q, want %q", c.text, c.url, got, c.want)
		}
	}
}

// A text cut partway into a secret-bearing part (an answer's excerpt ends at
// a byte limit) hides the part's start too; an uncut text is left as it is.
func TestWebhookTextHidesASecretTheCutSplit(t *testing.T) {
	u, err := url.Parse("https://hooks.slack.com/services/T024BE7LD/B07R2K7QF/m2zXaQ9kWpLs8vT3nYcE")
	if err != nil {
		t.Fatal(err)
	}
	full := "Cannot POST /services/T024BE7LD/B07R2K7QF/m2zXaQ9kWpLs8vT3nYcE"
	for n := len("Cannot POST /services/") + 1; n < len(full); n++ {
		got := WebhookText(full[:n], u, true)
		if got != "Cannot POST /services/…" {
			t.Errorf("cut at %d: %q, want %q", n, got, "Cannot POST /services/…")
		}
	}
	for _, s := range []string{"m2zX", "B07R2K7", "T024"} {
		if got := WebhookText("the token starts "+s, u, true); strings.Contains(got, s) {
			t.Errorf("cut after %q: %q", s, got)
		}
	}
	if got := WebhookText("Cannot POST /services/", u, true); got != "Cannot POST /services/" {
		t.Errorf("a cut where nothing is hidden: %q", got)
	}
	if got := WebhookText("Cannot POST /services/T024", u, false); got != "Cannot POST /services/T024" {
		t.Errorf("an uncut text: %q", got)
	}
}
