package config

import (
	"path/filepath"
	"strings"
	"testing"
)

// A configuration file that cannot be read: "pass --config PATH" only when
// the default file was read (--config not given, most likely); a path given
// with --config (a typo) is to be checked. Found by review: `--config
// demo/routr.yaml` was told to pass --config.
func TestConfigPathHintOnlyWhenConfigNotGiven(t *testing.T) {
	t.Chdir(t.TempDir())
	_, err := Load(DefaultPath)
	if err == nil || !strings.Contains(err.Error(), "pass --config PATH") {
		t.Errorf("Load of the missing default file: %v; want the hint to pass --config", err)
	}
	given := filepath.Join("demo", "routr.yaml")
	_, err = Load(given)
	if err == nil || strings.Contains(err.Error(), "pass --config") ||
		!strings.Contains(err.Error(), "check the path given to --config") || !strings.Contains(err.Error(), "demo/router.yaml") {
		t.Errorf("Load of a missing file given with --config: %v; want to check the path, not to pass --config", err)
	}
}
