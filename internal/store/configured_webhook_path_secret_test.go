package store_test

import (
	"strings"
	"testing"

	"github.com/routerhq/router/internal/store"
)

// The refusal of a stored key's webhook for an owner whose configured
// webhook wins names that webhook without its path past the first segment:
// Slack's carries its credential there.
func TestConfiguredWebhookRefusalDoesNotRepeatPathSecret(t *testing.T) {
	const token = "XyZsecretTOKEN1234567890"
	err := &store.ConfiguredWebhookError{Owner: "acme", URL: "https://hooks.slack.com/services/T0001ABCD/B0002EFGH/" + token}
	if msg := err.Error(); strings.Contains(msg, token) || !strings.Contains(msg, "https://hooks.slack.com/services/…") {
		t.Errorf("the refusal: %s; want the webhook shown as https://hooks.slack.com/services/…", msg)
	}
}
