package config

import (
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
)

// A webhooks.backoff_cap of a few seconds let River's 10,000 tries of a
// delivery run out long before webhooks.retry_for; its stuck-job rescuer
// then discards the job, and the event stays pending with nothing to deliver
// it. The floor follows retry_for: waits are jittered down to half the cap,
// so 15s would still not do for 24h.
func TestWebhookBackoffCapMustOutlastRetryFor(t *testing.T) {
	t.Setenv("DATABASE_URL", "")
	mustRefuse(t, "listne: 1\nwebhooks: {backoff_cap: 15s}\n", "listne is not a known setting",
		"webhooks.backoff_cap (15s) is too short for webhooks.retry_for (24h0m0s)", "10000 tries", "at least 17.3s")
	mustRefuse(t, "webhooks: {backoff_base: 1s, backoff_cap: 2s}\n", "webhooks.backoff_cap (2s)")
	mustRefuse(t, "webhooks: {retry_for: 72h, backoff_cap: 30s}\n", "is too short for webhooks.retry_for (72h0m0s)", "at least 51.9s")
	for _, y := range []string{"webhooks: {backoff_cap: 17.3s}\n", "webhooks: {retry_for: 72h, backoff_cap: 51.9s}\n"} {
		if _, err := Parse([]byte(y)); err != nil {
			t.Errorf("%q: %v", y, err)
		}
	}
	// A very long window needs a long cap (and the sums do not overflow).
	mustRefuse(t, "webhooks: {retry_for: 2000000h}\n", "webhooks.backoff_cap (1h0m0s) is too short for webhooks.retry_for (2000000h0m0s)")
	// The floor is exact: every wait at the bottom of its jitter, the
	// 9,999th try starts no sooner than retry_for.
	base, need := 5*time.Second, 17300*time.Millisecond
	if got := minDeliverySpan(base, need, WebhookDeliveryTries, 1<<62); got < 24*time.Hour {
		t.Fatalf("17.3s: %s", got)
	}
	if got := minDeliverySpan(base, need-100*time.Millisecond, WebhookDeliveryTries, 1<<62); got >= 24*time.Hour {
		t.Fatalf("17.2s would do too: %s", got)
	}
}

// WebhookDeliveryTries is the max_attempts internal/store enqueues delivery
// jobs with.
func TestWebhookDeliveryTriesMatchTheStore(t *testing.T) {
	b, err := os.ReadFile("../store/complete.go")
	if err != nil {
		t.Fatal(err)
	}
	if want := "'webhook_delivery', " + strconv.Itoa(WebhookDeliveryTries) + ","; !strings.Contains(string(b), want) {
		t.Fatalf("internal/store/complete.go no longer enqueues deliveries with %s: update WebhookDeliveryTries", want)
	}
}
