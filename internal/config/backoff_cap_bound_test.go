package config

import "testing"

// webhooks.backoff_cap had only to be positive: a cap of centuries overflowed
// the delivery backoff's doubling into a negative wait, a panic in River's
// retry policy that stopped the router at a delivery's 32nd failed try. It is
// now at most webhooks.retry_for.
func TestWebhookBackoffCapAtMostRetryFor(t *testing.T) {
	mustRefuse(t, "webhooks: {backoff_cap: 2000000h}\n",
		"webhooks.backoff_cap (2000000h0m0s) must be at most webhooks.retry_for (24h0m0s)")
	mustRefuse(t, "webhooks: {retry_for: 48h, backoff_cap: 49h}\n",
		"webhooks.backoff_cap (49h0m0s) must be at most webhooks.retry_for (48h0m0s)")
	for _, y := range []string{"webhooks: {backoff_cap: 24h}\n", "webhooks: {retry_for: 48h, backoff_cap: 48h}\n"} {
		if _, err := Parse([]byte(y)); err != nil {
			t.Errorf("refused %q: %v", y, err)
		}
	}
}
