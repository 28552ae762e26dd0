package main

import (
	"context"
	"strings"
	"testing"
)

// Help that was asked for (`router --help`, `router help serve`, `router
// serve -h`, ...) is the command's output: it goes to stdout with exit 0, so
// `router serve --help | grep listen` finds it. It went to stderr, and the
// pipe showed nothing. Usage printed because of an error (an unknown command
// or flag, a missing subcommand or argument) stays on stderr, with exit 2.
// None of these reach a database or a configuration file.
func TestRequestedHelpGoesToStdout(t *testing.T) {
	ctx := context.Background()
	var asked [][]string
	for _, h := range []string{"help", "-h", "--help"} {
		asked = append(asked, []string{h})
	}
	asked = append(asked, []string{}) // no command: what there is, as `router help`
	for _, c := range commands() {
		asked = append(asked, []string{c.name, "--help"}, []string{c.name, "-h"}, []string{"help", c.name})
	}
	// Every subcommand the router knows (main's subcommands), so a new one
	// is asked too.
	for cmd, subs := range subcommands {
		for _, s := range subs {
			sub := []string{cmd, s}
			asked = append(asked, append(sub[:2:2], "--help"), append(sub[:2:2], "-h"), append([]string{"help"}, sub...))
		}
	}
	asked = append(asked, []string{"keys", "help"}, []string{"jobs", "help"}, []string{"keys", "revoke", "help"}, []string{"jobs", "get", "help"})
	for _, args := range asked {
		var code int
		stdout, stderr := captureOutput(t, func() { code = run(ctx, args) })
		if code != 0 || stderr != "" || !strings.HasPrefix(stdout, "Usage:") {
			t.Errorf("router %s: exit code %d, stderr %q, stdout %q; want exit code 0, the help on stdout and nothing on stderr",
				strings.Join(args, " "), code, stderr, stdout)
		}
	}

	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"nosuch"}, `unknown command "nosuch"`},
		{[]string{"help", "nosuch"}, `unknown command "nosuch"`},
		{[]string{"serve", "--bogus"}, "flag provided but not defined: -bogus"},
		{[]string{"migrate", "-x"}, "flag provided but not defined: -x"},
		{[]string{"keys", "create", "--nope"}, "flag provided but not defined: -nope"},
		{[]string{"jobs", "list", "--limit", "many"}, `invalid value "many"`},
		{[]string{"conformance", "run", "--bogus"}, "flag provided but not defined: -bogus"},
		{[]string{"localdb", "--bogus"}, "flag provided but not defined: -bogus"},
		{[]string{"keys"}, "which subcommand?"},
		{[]string{"keys", "nosuch"}, `unknown subcommand "nosuch"`},
		{[]string{"jobs"}, "which subcommand?"},
		{[]string{"jobs", "get"}, "which job?"},
		{[]string{"localdb"}, "which command?"},
		{[]string{"conformance"}, "Usage: router conformance"},
	} {
		var code int
		stdout, stderr := captureOutput(t, func() { code = run(ctx, c.args) })
		if code != 2 || stdout != "" || !strings.Contains(stderr, c.want) || !strings.Contains(stderr, "Usage") {
			t.Errorf("router %s: exit code %d, stdout %q, stderr %q; want exit code 2, the error (%q) and usage on stderr and nothing on stdout",
				strings.Join(c.args, " "), code, stdout, stderr, c.want)
		}
	}
}
