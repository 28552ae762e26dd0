package server

import (
	"context"
	"strings"
	"testing"

	"github.com/routerhq/router/internal/config"
)

// Two differently named variables holding one value, in roles owned by
// different parties, refuse the start, naming both variables and never the
// value: each secret is given to whoever it is for (a tenant, a tenant's
// webhook receiver, a provider with every request), who could then use it as
// the other. Found by review (the same variable named twice is the
// configuration's to refuse).
func TestSecretValueSharedAcrossPartiesRefused(t *testing.T) {
	const shared = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw" // 24 bytes after base64
	acme := func(w *config.Webhook) config.APIKey {
		return config.APIKey{Owner: "acme", KeyEnv: "ACME_KEY", Webhook: w}
	}
	globex := func(w *config.Webhook) config.APIKey {
		return config.APIKey{Owner: "globex", KeyEnv: "GLOBEX_KEY", Webhook: w}
	}
	acmeHook := &config.Webhook{URL: "https://hooks.acme.example/h", SecretEnv: "ACME_HOOK"}
	globexHook := &config.Webhook{URL: "https://hooks.globex.example/h", SecretEnv: "GLOBEX_HOOK"}
	openai := config.Provider{Name: "openai", Type: "openai", APIKeyEnv: "OPENAI_API_KEY"}
	for name, c := range map[string]struct {
		cfg   config.Config
		env   map[string]string // unset variables hold values of their own
		names []string          // both variables, in the refusal
	}{
		"two owners' webhook secrets": {
			config.Config{APIKeys: []config.APIKey{acme(acmeHook), globex(globexHook)}},
			map[string]string{"ACME_HOOK": shared, "GLOBEX_HOOK": shared}, []string{"ACME_HOOK", "GLOBEX_HOOK", "owner globex's webhook receiver accepts"}},
		"a webhook secret and the operator key": {
			config.Config{OpsKeyEnv: "OPS_KEY", APIKeys: []config.APIKey{acme(acmeHook)}},
			map[string]string{"OPS_KEY": shared, "ACME_HOOK": shared}, []string{"ops_key_env OPS_KEY", "ACME_HOOK", "operator surface"}},
		"a webhook secret and another owner's key": {
			config.Config{APIKeys: []config.APIKey{acme(acmeHook), globex(nil)}},
			map[string]string{"ACME_HOOK": shared, "GLOBEX_KEY": shared}, []string{"ACME_HOOK", "GLOBEX_KEY", "authenticates as owner globex"}},
		"a webhook secret and a provider's key": {
			config.Config{APIKeys: []config.APIKey{acme(acmeHook)}, Providers: []config.Provider{openai}},
			map[string]string{"ACME_HOOK": shared, "OPENAI_API_KEY": shared}, []string{"ACME_HOOK", "OPENAI_API_KEY"}},
		"a tenant's key and a provider's key": {
			config.Config{APIKeys: []config.APIKey{acme(nil)}, Providers: []config.Provider{openai}},
			map[string]string{"ACME_KEY": shared, "OPENAI_API_KEY": shared}, []string{"api_keys[0].key_env ACME_KEY", "providers[0] (openai).api_key_env OPENAI_API_KEY"}},
		"the operator key and a provider's key": {
			config.Config{OpsKeyEnv: "OPS_KEY", Providers: []config.Provider{openai}},
			map[string]string{"OPS_KEY": shared, "OPENAI_API_KEY": shared}, []string{"OPS_KEY", "OPENAI_API_KEY"}},
		"an owner's key and its own webhook secret": {
			config.Config{APIKeys: []config.APIKey{acme(acmeHook)}},
			map[string]string{"ACME_KEY": shared, "ACME_HOOK": shared}, []string{"ACME_KEY", "ACME_HOOK", "authenticates as owner acme"}},
		"one owner's old webhook secret and another's new one": {
			config.Config{APIKeys: []config.APIKey{
				acme(&config.Webhook{URL: acmeHook.URL, SecretEnv: "ACME_HOOK", PreviousSecretEnv: "ACME_HOOK_OLD"}), globex(globexHook)}},
			map[string]string{"ACME_HOOK_OLD": shared, "GLOBEX_HOOK": shared}, []string{"previous_secret_env ACME_HOOK_OLD", "GLOBEX_HOOK"}},
	} {
		getenv := func(k string) string {
			if v, ok := c.env[k]; ok {
				return v
			}
			return "a-secret-of-its-own-" + k // usable as a webhook secret
		}
		_, _, _, err := configWebhooks(&c.cfg, getenv)
		if err == nil {
			t.Errorf("%s: one value in both, accepted; want a refusal naming %v", name, c.names)
			continue
		}
		for _, want := range append(c.names, "secrets of different parties share one value") {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("%s: %v; want it to name %q", name, err, want)
			}
		}
		if strings.Contains(err.Error(), shared) {
			t.Errorf("%s: the refusal shows the secret's value: %v", name, err)
		}
	}
}

// What one party holds twice may share a value: one owner's current and
// previous webhook secrets, two providers' keys (one account behind two provider
// entries), two owners whose webhooks go to one receiver (it holds both
// secrets anyway). Two bearer keys are staticKeys' and notATenantsKey's to
// refuse, each once.
func TestSecretValueSharedWithinOnePartyAllowed(t *testing.T) {
	const shared = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
	hook := func(url, env string) *config.Webhook { return &config.Webhook{URL: url, SecretEnv: env} }
	for name, c := range map[string]struct {
		cfg    config.Config
		sharer []string
	}{
		"one owner's webhook secret and old webhook secret": {config.Config{APIKeys: []config.APIKey{{Owner: "acme", KeyEnv: "ACME_KEY",
			Webhook: &config.Webhook{URL: "https://hooks.acme.example/h", SecretEnv: "ACME_HOOK", PreviousSecretEnv: "ACME_HOOK_OLD"}}}},
			[]string{"ACME_HOOK", "ACME_HOOK_OLD"}},
		"two providers": {config.Config{Providers: []config.Provider{
			{Name: "fast", Type: "openai", APIKeyEnv: "OPENAI_KEY_A"}, {Name: "slow", Type: "openai", APIKeyEnv: "OPENAI_KEY_B"}}},
			[]string{"OPENAI_KEY_A", "OPENAI_KEY_B"}},
		"two owners' webhooks to one receiver": {config.Config{APIKeys: []config.APIKey{
			{Owner: "acme", KeyEnv: "ACME_KEY", Webhook: hook("https://hooks.example/h", "ACME_HOOK")},
			{Owner: "globex", KeyEnv: "GLOBEX_KEY", Webhook: hook("https://hooks.example/h", "GLOBEX_HOOK")}}},
			[]string{"ACME_HOOK", "GLOBEX_HOOK"}},
		"the operator key and a tenant's key (notATenantsKey's)": {config.Config{OpsKeyEnv: "OPS_KEY",
			APIKeys: []config.APIKey{{Owner: "acme", KeyEnv: "ACME_KEY"}}}, []string{"OPS_KEY", "ACME_KEY"}},
		"a scripted provider's unread key and a tenant's": {config.Config{APIKeys: []config.APIKey{{Owner: "acme", KeyEnv: "ACME_KEY"}},
			Providers: []config.Provider{{Name: "s", Type: "scripted", APIKeyEnv: "UNUSED"}}}, []string{"ACME_KEY", "UNUSED"}},
	} {
		getenv := func(k string) string {
			for _, s := range c.sharer {
				if k == s {
					return shared
				}
			}
			return "a-secret-of-its-own-" + k
		}
		if _, _, _, err := configWebhooks(&c.cfg, getenv); err != nil {
			t.Errorf("%s: %v; want it allowed", name, err)
		}
	}
}

// The start refuses before the database is touched: the database named here
// does not answer, so a start that got that far would fail saying so.
func TestSharedSecretValueRefusedBeforeTheDatabase(t *testing.T) {
	t.Setenv("DATABASE_URL", "postgres://u@127.0.0.1:1/d?connect_timeout=1")
	t.Setenv("SHARED_ACME_KEY", "acme-key-0123456789")
	t.Setenv("SHARED_ACME_HOOK", "a-value-acme-and-openai-both-hold")
	t.Setenv("SHARED_OPENAI_KEY", "a-value-acme-and-openai-both-hold")
	cfg, err := config.Parse([]byte(`api_keys:
  - owner: acme
    key_env: SHARED_ACME_KEY
    webhook: {url: "http://127.0.0.1:1/hook", secret_env: SHARED_ACME_HOOK}
providers:
  - {name: a, type: openai, base_url: "http://127.0.0.1:1/v1", api_key_env: SHARED_OPENAI_KEY, model: m}
routes:
  default: {providers: [a]}
`))
	if err != nil {
		t.Fatal(err)
	}
	_, err = New(context.Background(), cfg, Options{})
	if err == nil || !strings.Contains(err.Error(), "api_keys[0].webhook.secret_env SHARED_ACME_HOOK and providers[0] (a).api_key_env SHARED_OPENAI_KEY hold the same value") {
		t.Fatalf("start with acme's webhook secret equal to provider a's key: %v; want a refusal naming both variables", err)
	}
}
