package main

import (
	"context"
	"strings"
	"testing"
)

// A flag a command does not take was refused with the flag package's own
// line, "flag provided but not defined: -json", naming no command, while
// every other error of a command starts with the command typed (`router
// keys create: …`, docs/operations.md): with the flag after a job id, the
// operator could not tell which command had refused what. Found in a
// newcomer's walkthrough.
func TestUnknownFlagErrorNamesCommand(t *testing.T) {
	for _, c := range []struct {
		args   []string
		prefix string
	}{
		{[]string{"keys", "list", "--bogus"}, "router keys list: "},
		{[]string{"serve", "--bogus"}, "router serve: "},
		{[]string{"jobs", "list", "--bogus"}, "router jobs list: "},
		{[]string{"jobs", "list", "--limit", "many"}, "router jobs list: "},
		{[]string{"jobs", "get", "01a246ed-aac8-7db8-a7cd-5b115d957749", "--json"}, "router jobs get: "},
		{[]string{"conformance", "run", "--bogus"}, "router conformance run: "},
		{[]string{"migrate", "--bogus"}, "router migrate: "},
		{[]string{"localdb", "--bogus"}, "router localdb: "},
	} {
		var code int
		_, stderr := captureOutput(t, func() { code = run(context.Background(), c.args) })
		first, _, _ := strings.Cut(stderr, "\n")
		if code != 2 || !strings.HasPrefix(first, c.prefix) || !strings.Contains(stderr, "Usage") {
			t.Errorf("router %s: exit %d, stderr %q; want exit 2, a first line starting %q, and the usage",
				strings.Join(c.args, " "), code, stderr, c.prefix)
		}
	}
}
