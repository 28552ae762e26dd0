package main

import (
	"context"
	"strings"
	"testing"
)

// docs/operations.md: "Errors are prefixed with the command typed, subcommand
// included (`router keys create: …`)", and a mistake says what is wrong.
// `router conformance run`'s own checks of --concurrency, --temperature and
// leftover words printed a bare message ("--concurrency: 0 is not …"), and
// `router conformance bogus` printed only the usage, never saying that "bogus"
// is no subcommand (`router keys bogus` and `router jobs bogus` do).
func TestConformanceUsageErrorsArePrefixed(t *testing.T) {
	for _, c := range []struct {
		args       []string
		prefix     string
		says, also string
	}{
		{[]string{"conformance", "run", "--concurrency", "0"}, "router conformance run: ", "--concurrency", "1 or more"},
		{[]string{"conformance", "run", "--temperature", "5"}, "router conformance run: ", `--temperature: "5"`, "from 0 to 2"},
		{[]string{"conformance", "run", "extra"}, "router conformance run: ", `unexpected argument "extra"`, "Usage: router conformance run"},
		{[]string{"conformance", "bogus"}, "router conformance: ", `unknown subcommand "bogus"`, "Usage: router conformance run"},
		{[]string{"conformance"}, "router conformance: ", "which subcommand?", "Usage: router conformance run"},
	} {
		var code int
		stdout, stderr := captureOutput(t, func() { code = run(context.Background(), c.args) })
		if code != 2 || stdout != "" || !strings.HasPrefix(stderr, c.prefix) || !strings.Contains(stderr, c.says) || !strings.Contains(stderr, c.also) {
			t.Errorf("router %s: exit %d, stdout %q, stderr %q; want exit 2 and stderr starting %q saying %q and %q",
				strings.Join(c.args, " "), code, stdout, stderr, c.prefix, c.says, c.also)
		}
	}
}
