package webhook_test

import (
	"testing"

	"github.com/routerhq/router/internal/config"
	"github.com/routerhq/router/internal/store"
)

// The store's default redelivery window (for a store opened without one) is
// the configuration's with the default webhook settings, Retry-After spread
// included.
func TestDefaultRedeliveryWindowIsTheDefaultConfigurations(t *testing.T) {
	t.Setenv("DATABASE_URL", "")
	cfg, err := config.Parse([]byte("api_keys:\n  - {owner: acme, key_env: ACME_KEY}\nproviders:\n  - {name: a, type: scripted}\nroutes:\n  r: {providers: [a]}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := store.DefaultRedeliveryWindow, cfg.Webhooks.RedeliveryWindow(); got != want {
		t.Errorf("store.DefaultRedeliveryWindow is %s, want the default configuration's %s", got, want)
	}
}
