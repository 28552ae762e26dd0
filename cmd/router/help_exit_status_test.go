package main

import (
	"context"
	"strings"
	"testing"
)

// `router help` says what a script can tell from an exit status
// (docs/operations.md, "The command line": 129 for SIGHUP, 141 for a stdout
// whose reader is gone, ...) and that serve takes --debug-listen; `router
// help serve` lists --debug-listen among serve's flags. Before, `router help`
// said neither: the statuses were only in docs/operations.md.
func TestHelpSaysExitStatusesAndDebugListen(t *testing.T) {
	stdout, _ := captureOutput(t, func() { run(context.Background(), []string{"help"}) })
	for _, want := range []string{
		"router serve [--config router.yaml] [--debug-listen 127.0.0.1:6060]",
		"Exit statuses:",
		"\n  0    success",
		"\n  1    the command failed",
		"\n  2    the command line is wrong",
		"\n  129  SIGHUP, 130 Ctrl-C (SIGINT), 143 SIGTERM (128 + the signal)",
		"\n  141  the reader of stdout went away",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("router help lacks %q:\n%s", want, stdout)
		}
	}
	stdout, _ = captureOutput(t, func() { run(context.Background(), []string{"help", "serve"}) })
	if !strings.Contains(stdout, "--debug-listen") {
		t.Errorf("router help serve lacks --debug-listen:\n%s", stdout)
	}
}
