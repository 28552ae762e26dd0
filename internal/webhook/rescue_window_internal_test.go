package webhook

import (
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/riverqueue/river"

	"github.com/routerhq/router/internal/config"
)

// River's rescuer runs on River's leader only, with the leader's
// configuration: a rescue window computed from each replica's own
// webhooks.timeout (2×(timeout+10s)+5s) let a leader with a short timeout
// rescue — and send again — a try still running on a replica with a long one.
// The window is the same on every replica, from the bound on the timeout,
// and exceeds the longest a live try can run under that bound.
func TestRescueWindowDoesNotDependOnTheTimeout(t *testing.T) {
	windows := map[time.Duration]time.Duration{}
	for _, timeout := range []time.Duration{time.Second, 10 * time.Second, MaxTimeout} {
		w := NewWorker(nil, Config{Timeout: timeout})
		cfg := ServiceConfig{Config: w.cfg, Backoff: w.backoff, MaxWorkers: DefaultWorkers, Log: slog.New(slog.DiscardHandler)}
		windows[timeout] = riverConfig(cfg, river.NewWorkers(), w).RescueStuckJobsAfter
	}
	longest := NewWorker(nil, Config{Timeout: MaxTimeout}).Timeout(nil) + recordTimeout
	for timeout, rescue := range windows {
		if rescue != windows[MaxTimeout] {
			t.Errorf("webhooks.timeout %s: rescue after %s, but after %s with %s", timeout, rescue, windows[MaxTimeout], MaxTimeout)
		}
		if rescue <= longest {
			t.Errorf("webhooks.timeout %s: rescue after %s, within the %s a live try may run", timeout, rescue, longest)
		}
	}
	if MaxTimeout != config.MaxWebhookTimeout {
		t.Fatalf("webhook.MaxTimeout %s, config.MaxWebhookTimeout %s: keep them equal", MaxTimeout, config.MaxWebhookTimeout)
	}
	// A service is not built with a timeout the window does not cover.
	_, err := NewService(nil, nil, ServiceConfig{Config: Config{Timeout: MaxTimeout + time.Second}})
	if err == nil || !strings.Contains(err.Error(), "longer than 2m0s") {
		t.Fatalf("a service with a timeout over %s: %v", MaxTimeout, err)
	}
}
