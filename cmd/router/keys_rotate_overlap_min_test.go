package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// --overlap in seconds or less (24s meant as 24h, 500ms, 1ns) is refused
// before the database is reached: the replaced secret would stop signing
// almost at once, before any receiver could switch. It used to be taken.
func TestRotateOverlapUnderAMinuteIsRefused(t *testing.T) {
	unsetenv(t, "DATABASE_URL")
	cfg := writeRawConfig(t, "database_url: postgres://postgres@127.0.0.1:1/router?sslmode=disable\nlog: {level: error}\n") // never reached
	for o, hint := range map[string]string{"24s": "did you mean --overlap 24h?", "500ms": "", "1ns": ""} {
		var code int
		_, stderr := captureOutput(t, func() {
			code = run(context.Background(), []string{"keys", "rotate-webhook-secret", "--owner", "acme", "--overlap", o, "--config", cfg})
		})
		if code != 2 || !strings.Contains(stderr, "--overlap "+o+": ") || !strings.Contains(stderr, "at least 1m") || !strings.Contains(stderr, hint) {
			t.Errorf("--overlap %s: exit code %d, stderr %q; want 2, saying it must be at least 1m %s", o, code, stderr, hint)
		}
	}
}

// writeRawConfig writes text as a configuration file and returns its path.
func writeRawConfig(t *testing.T, text string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "router.yaml")
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}
