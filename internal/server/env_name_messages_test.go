package server

import (
	"crypto/rand"
	"strings"
	"testing"

	"github.com/routerhq/router/internal/config"
)

// A configuration that names a secret-shaped variable (built without Load,
// whose check refuses it) is refused at start naming the setting, never the
// secret; a conventional name is still shown.
func TestStartupEmptyVariableMessagesHideSecretShapedNames(t *testing.T) {
	routerKey, opsKey, groqKey := "rk_"+rand.Text(), "rk_"+rand.Text(), "gsk_"+strings.Repeat("aB3dE6gH9k", 5)+"Zz"
	cfg := &config.Config{OpsKeyEnv: opsKey, APIKeys: []config.APIKey{{Owner: "acme", KeyEnv: "ACME_EMPTY_KEY"}, {Owner: "globex", KeyEnv: routerKey}},
		Providers: []config.Provider{{Name: "g", Type: "openai", APIKeyEnv: groqKey}}}
	t.Setenv("ACME_EMPTY_KEY", "")
	_, err := staticKeys(cfg)
	if err == nil || strings.Contains(err.Error(), routerKey) ||
		!strings.Contains(err.Error(), "api_keys[0].key_env: environment variable ACME_EMPTY_KEY (owner acme) is empty") ||
		!strings.Contains(err.Error(), "api_keys[1].key_env: an environment variable whose name is not shown") {
		t.Errorf("staticKeys: %v", err)
	}
	if _, err := operatorKey(cfg); err == nil || strings.Contains(err.Error(), opsKey) || !strings.Contains(err.Error(), "ops_key_env: an environment variable whose name is not shown") {
		t.Errorf("operatorKey: %v", err)
	}
	if _, err := buildAdapter(&cfg.Providers[0]); err == nil || strings.Contains(err.Error(), groqKey) || !strings.Contains(err.Error(), "provider g: an environment variable whose name is not shown") {
		t.Errorf("buildAdapter: %v", err)
	}
}
