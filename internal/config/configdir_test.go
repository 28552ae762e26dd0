package config

import (
	"path/filepath"
	"testing"
)

// A config file in the root directory (--config /router.yaml, a common mount
// point in containers) had Dir "", so prompts_dir resolved from the working
// directory: a router whose prompts were at /prompts served none. Found by
// review.
func TestConfigDirectoryOfAFileInRoot(t *testing.T) {
	for path, want := range map[string]string{
		"/router.yaml":          "/",
		"/etc/router/cfg.yaml":  "/etc/router",
		"router.yaml":           ".",
		"demo/router.yaml":      "demo",
		"../router.yaml":        "..",
		"./deploy//router.yaml": "deploy",
	} {
		if got := dirOf(path); got != want {
			t.Errorf("dirOf(%q) = %q, want %q", path, got, want)
		}
	}
	if got := filepath.Join(dirOf("/router.yaml"), "prompts"); got != "/prompts" {
		t.Fatalf("prompts_dir of /router.yaml resolves to %q, want /prompts", got)
	}
}
