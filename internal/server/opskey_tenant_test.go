package server

import (
	"strings"
	"testing"

	"github.com/routerhq/router/internal/config"
)

// The operator key must not be a tenant's key, or that tenant opens the
// operator surface (every owner's jobs on the dashboard): the same variable
// named twice is refused at load, two variables holding one value at start.
// Found by review.
func TestOperatorKeyIsNotATenantsKey(t *testing.T) {
	t.Setenv("ACME_KEY", "shared-secret")
	t.Setenv("OPS_KEY", "shared-secret")
	_, err := config.Parse([]byte("ops_listen: 0.0.0.0:9090\nops_key_env: ACME_KEY\napi_keys: [{owner: acme, key_env: ACME_KEY}]\n"))
	if err == nil || !strings.Contains(err.Error(), "ops_key_env: ACME_KEY is also api_keys[0].key_env") {
		t.Errorf("one variable for the operator and a tenant: %v", err)
	}
	cfg, err := config.Parse([]byte("ops_listen: 0.0.0.0:9090\nops_key_env: OPS_KEY\napi_keys: [{owner: acme, key_env: ACME_KEY}]\n"))
	if err != nil {
		t.Fatal(err)
	}
	keys, err := staticKeys(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ops, err := operatorKey(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := notATenantsKey(cfg, ops, keys); err == nil || !strings.Contains(err.Error(), "owner acme") {
		t.Errorf("two variables holding one key: %v", err)
	}
	t.Setenv("OPS_KEY", "an-operator-secret")
	if ops, _ := operatorKey(cfg); notATenantsKey(cfg, ops, keys) != nil {
		t.Error("a key of its own was refused")
	}
}
