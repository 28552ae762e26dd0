package main

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/routerhq/router/internal/config"
	"github.com/routerhq/router/internal/testdb"
)

// serveConfig loads a `router serve` configuration for the test database db
// (through DATABASE_URL): listening on any port, with the repository's
// prompts, the conformance gate off and one API key, key, for owner (read from
// an environment variable named after owner). rest is the remainder of
// router.yaml: log, providers, routes and whatever else the test needs.
func serveConfig(t *testing.T, db *testdb.DB, owner, key, rest string) *config.Config {
	t.Helper()
	t.Setenv("DATABASE_URL", db.URL)
	keyEnv := strings.ToUpper(strings.ReplaceAll(owner, "-", "_")) + "_KEY"
	t.Setenv(keyEnv, key)
	prompts, _ := filepath.Abs("../../prompts")
	path := filepath.Join(t.TempDir(), "router.yaml")
	yaml := fmt.Sprintf(`listen: 127.0.0.1:0
prompts_dir: %q
api_keys: [{owner: %s, key_env: %s}]
conformance: {gate: off}
%s`, prompts, owner, keyEnv, rest)
	if err := os.WriteFile(path, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// triageJobRequest is a POST /v1/jobs of a triage job to the router at base,
// with the API key, the idempotency key and Prefer: wait=waitSeconds.
func triageJobRequest(base, key, idempotencyKey string, waitSeconds int) *http.Request {
	req, _ := http.NewRequest(http.MethodPost, base+"/v1/jobs",
		strings.NewReader(`{"prompt":"triage","input":{"subject":"cannot log in","body":"The reset link expired."}}`))
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Idempotency-Key", idempotencyKey)
	req.Header.Set("Prefer", fmt.Sprintf("wait=%d", waitSeconds))
	req.Header.Set("Content-Type", "application/json")
	return req
}
