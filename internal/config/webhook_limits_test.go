package config

import (
	"strings"
	"testing"
)

// webhooks.max_inflight_per_owner bounds one owner's deliveries in flight per
// replica: a quarter of webhooks.workers unless set, at least 1, and never
// more than the workers.
func TestWebhookDeliveriesPerOwnerDefaultToAQuarterOfTheWorkers(t *testing.T) {
	t.Setenv("DATABASE_URL", "")
	for y, want := range map[string]int{
		"":                        25, // 100 workers
		"webhooks: {workers: 40}": 10,
		"webhooks: {workers: 2}":  1,
		"webhooks: {workers: 1}":  1,
		"webhooks: {workers: 8, max_inflight_per_owner: 8}": 8,
	} {
		c, err := Parse([]byte(y))
		if err != nil {
			t.Fatalf("%q: %v", y, err)
		}
		if got := c.Webhooks.MaxInflightPerOwner; got != want {
			t.Errorf("%q: max_inflight_per_owner %d, want %d", y, got, want)
		}
	}
	mustRefuse(t, "webhooks: {workers: 8, max_inflight_per_owner: 9}\n",
		"webhooks.max_inflight_per_owner (9) must be between 1 and webhooks.workers (8)")
	mustRefuse(t, "webhooks: {max_inflight_per_owner: 0}\n",
		"webhooks.max_inflight_per_owner (0) must be between 1 and webhooks.workers (100)")
	mustRefuse(t, "webhooks: {max_inflight_per_owner: -1}\n",
		"webhooks.max_inflight_per_owner (-1) must be between 1")
}

// River's rescuer takes a delivery still running 2×2m + 1m after it started
// for one whose replica died, and sends it again; it runs on whichever
// replica leads River, with that replica's settings, so the window is fixed
// from the bound on webhooks.timeout. A longer timeout is refused, saying why.
func TestWebhookTimeoutAboveTheRescueBoundIsRefused(t *testing.T) {
	t.Setenv("DATABASE_URL", "")
	if c, err := Parse([]byte("webhooks: {timeout: 2m}\n")); err != nil || c.Webhooks.Timeout.D() != MaxWebhookTimeout {
		t.Fatalf("webhooks.timeout at the bound: %v", err)
	}
	_, err := Parse([]byte("webhooks: {timeout: 121s}\n"))
	if err == nil {
		t.Fatal("webhooks.timeout 121s accepted")
	}
	for _, want := range []string{"webhooks.timeout (2m1s) must be at most 2m0s", "5m0s after it started", "sent twice at once"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the refusal does not say %q:\n%v", want, err)
		}
	}
}
