package main

import (
	"context"
	"strings"
	"testing"

	"github.com/routerhq/router/internal/store"
	"github.com/routerhq/router/internal/testdb"
)

// `router keys create --webhook-url`, `list`, `rotate-webhook-secret` and
// `revoke` showed a webhook URL whole, and Slack's and Discord's carry their
// credential in the path: they show it up to its first segment now
// (netredact.WebhookURL).
func TestKeysCommandsDoNotShowAWebhookPathSecret(t *testing.T) {
	db := testdb.New(t, store.Options{})
	cfg := writeConfig(t, db, "  - name: p\n    type: scripted")
	ctx := context.Background()
	const slackToken, discordToken = "XyZsecretTOKEN1234567890", "AbCdEfSecretToken_-123"
	slack := "https://hooks.slack.com/services/T0001ABCD/B0002EFGH/" + slackToken
	discord := "https://discord.com/api/webhooks/112233445566778899/" + discordToken
	run := func(args ...string) (stdout, stderr string) {
		t.Helper()
		return captureOutput(t, func() {
			if err := runKeys(ctx, append(args, "--config", cfg)); err != nil {
				t.Fatal(err)
			}
		})
	}
	shows := func(what, out string) {
		t.Helper()
		if strings.Contains(out, slackToken) || strings.Contains(out, discordToken) {
			t.Errorf("%s shows a webhook's token:\n%s", what, out)
		}
	}
	run("create", "--owner", "acme", "--webhook-url", slack)
	stdout, stderr := run("create", "--owner", "acme", "--webhook-url", discord)
	shows("keys create (replacing the owner's webhook)", stdout+stderr)
	if !strings.Contains(stderr, "no longer to https://hooks.slack.com/services/…") {
		t.Errorf("keys create no longer names the webhook it replaced: %s", stderr)
	}
	_, stderr = run("create", "--owner", "acme", "--webhook-url", discord)
	shows("keys create (the same webhook, a new secret)", stderr)
	stdout, _ = run("list")
	shows("keys list", stdout)
	if !strings.Contains(stdout, "https://discord.com/api/…") {
		t.Errorf("keys list does not show the webhook by its host:\n%s", stdout)
	}
	_, stderr = run("rotate-webhook-secret", "--owner", "acme")
	shows("keys rotate-webhook-secret", stderr)
	_, stderr = run("revoke", "3", "--no-wait") // key 2's webhook comes back
	shows("keys revoke", stderr)
	if !strings.Contains(stderr, "its events now go to https://discord.com/api/…") {
		t.Errorf("keys revoke no longer names the webhook the owner's events go to: %s", stderr)
	}
}
