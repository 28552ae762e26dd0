package server

import (
	"strings"
	"testing"

	"github.com/routerhq/router/internal/config"
)

// A key made from a file (kubectl create secret --from-file, an env file)
// ends in a newline, which no Authorization header can carry: tenant and
// operator keys are read without surrounding white space, and a variable
// holding only white space is refused as empty, naming it. Found by review.
func TestKeysAreReadWithoutSurroundingWhiteSpace(t *testing.T) {
	t.Setenv("ACME_KEY", "acme-secret-key\n")
	t.Setenv("OPS_KEY", " ops-secret-key\r\n")
	cfg, err := config.Parse([]byte("ops_listen: 0.0.0.0:9090\nops_key_env: OPS_KEY\napi_keys: [{owner: acme, key_env: ACME_KEY}]\n"))
	if err != nil {
		t.Fatal(err)
	}
	keys, err := staticKeys(cfg)
	if err != nil || keys["acme-secret-key"] != "acme" {
		t.Fatalf("tenant keys %q (%v): want acme-secret-key for acme", keys, err)
	}
	if ops, err := operatorKey(cfg); err != nil || ops != "ops-secret-key" {
		t.Fatalf("operator key %q (%v): want ops-secret-key", ops, err)
	}
	t.Setenv("ACME_KEY", " \n")
	if _, err := staticKeys(cfg); err == nil || !strings.Contains(err.Error(), "ACME_KEY") || !strings.Contains(err.Error(), "white space") {
		t.Errorf("a tenant key of white space: %v", err)
	}
	t.Setenv("OPS_KEY", "\n")
	if _, err := operatorKey(cfg); err == nil || !strings.Contains(err.Error(), "OPS_KEY") || !strings.Contains(err.Error(), "white space") {
		t.Errorf("an operator key of white space: %v", err)
	}
}

// A key with white space inside it loads no longer: the API refuses an
// Authorization header with more than one word after Bearer, so that owner
// could never authenticate. Refused at start, naming the variable. Found by
// review.
func TestKeyWithWhiteSpaceInsideIsRefusedAtLoad(t *testing.T) {
	for _, v := range []string{"abc def", "abc\tdef"} {
		t.Setenv("ACME_KEY", v)
		cfg, err := config.Parse([]byte("api_keys: [{owner: acme, key_env: ACME_KEY}]\n"))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := staticKeys(cfg); err == nil || !strings.Contains(err.Error(), "ACME_KEY") || !strings.Contains(err.Error(), "white space or a control character inside") {
			t.Errorf("key %q: %v, want refused naming ACME_KEY", v, err)
		}
	}
}
