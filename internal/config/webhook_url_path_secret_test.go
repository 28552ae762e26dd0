package config

import (
	"strings"
	"testing"
)

// Slack's and Discord's webhook URLs carry their credential in the path
// (/services/T…/B…/<token>, /api/webhooks/<id>/<token>): a refusal at load,
// which start-up prints and logs, repeated it whole, though it hid query
// secrets. It shows the path up to its first segment now
// (netredact.WebhookURL), and still the host, so the webhook can be found;
// the load message names its entry and owner.
func TestWebhookURLRefusalDoesNotRepeatPathSecret(t *testing.T) {
	const token = "XyZsecretTOKEN1234567890"
	for _, raw := range []string{
		"https://hooks.slack.com:99999/services/T0001ABCD/B0002EFGH/" + token,  // port out of range
		"https://hooks.slack.com/services/T0001ABCD/B0002EFGH/" + token + "#x", // fragment
		"https://hooks.slack.com/services/T0001ABCD/B0002EFGH/" + token + "\n", // a newline pasted with it
		"https://hooks.slack.com/services/T0001ABCD/B0002 EFGH/" + token,       // white space inside
		"ftp://discord.com/api/webhooks/112233445566778899/" + token,           // scheme
		"hooks.slack.com/services/T0001ABCD/B0002EFGH/" + token,                // no scheme
	} {
		err := ValidateWebhookURL(raw)
		if err == nil {
			t.Fatalf("%q accepted", raw)
		}
		if msg := err.Error(); strings.Contains(msg, token) || strings.Contains(msg, "B0002") {
			t.Errorf("the refusal of %q repeats the path's secret: %v", raw, err)
		} else if !strings.Contains(msg, "hooks.slack.com") && !strings.Contains(msg, "discord.com") {
			t.Errorf("the refusal of %q does not name the host: %v", raw, err)
		}
	}
	t.Setenv("DATABASE_URL", "")
	y := "api_keys:\n  - {owner: acme, key_env: ACME_KEY, webhook: {url: \"https://hooks.slack.com:0/services/T0001ABCD/B0002EFGH/" + token + "\", secret_env: ACME_HOOK}}\n" +
		"providers:\n  - {name: a, type: scripted}\nroutes:\n  r: {providers: [a]}\n"
	if _, err := Parse([]byte(y)); err == nil || strings.Contains(err.Error(), token) || !strings.Contains(err.Error(), "acme") {
		t.Errorf("load: %v", err)
	}
}
