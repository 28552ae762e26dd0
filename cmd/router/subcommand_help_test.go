package main

import (
	"context"
	"testing"
)

// `router keys help create` prints create's help, as `router help keys
// create` and `router keys create --help` do; it printed the keys overview.
// The same for jobs.
func TestHelpWordBeforeSubcommandShowsItsHelp(t *testing.T) {
	ctx := context.Background()
	for _, c := range [][2]string{{"keys", "create"}, {"keys", "revoke"}, {"jobs", "list"}, {"jobs", "get"}} {
		var wantCode int
		want, _ := captureOutput(t, func() { wantCode = run(ctx, []string{c[0], c[1], "--help"}) })
		for _, h := range []string{"help", "--help", "-h"} {
			var code int
			stdout, stderr := captureOutput(t, func() { code = run(ctx, []string{c[0], h, c[1]}) })
			if code != wantCode || code != 0 || stdout != want || stderr != "" {
				t.Errorf("router %s %s %s: exit %d, stdout %q, stderr %q; want exit 0 and `router %s %s --help`'s %q",
					c[0], h, c[1], code, stdout, stderr, c[0], c[1], want)
			}
		}
	}
}
