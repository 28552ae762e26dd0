package main

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
)

// `serve --debug-listen ""` (what `--debug-listen "$ADDR"` becomes with $ADDR
// unset) is a usage error, exit 2, said before the configuration is read or
// anything listens; it used to start the router without the listener asked
// for. (The configuration named does not exist: the flag is judged first.)
func TestServeRefusesBlankDebugListen(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "router.yaml")
	for _, flags := range [][]string{{"--debug-listen", ""}, {"--debug-listen= "}} {
		args := append([]string{"serve", "--config", missing}, flags...)
		var code int
		stdout, stderr := captureOutput(t, func() { code = run(context.Background(), args) })
		if code != 2 || stdout != "" || !strings.Contains(stderr, "--debug-listen") ||
			!strings.Contains(stderr, "names no address") || !strings.Contains(stderr, "leave --debug-listen out") {
			t.Errorf("router %q: exit code %d, stdout %q, stderr %q; want exit code 2 saying --debug-listen names no address",
				args, code, stdout, stderr)
		}
	}
}
