package main

import (
	"errors"
	"flag"
	"io"
	"strings"
	"testing"
)

// A flag given twice is refused across parseAroundArg's two passes (before
// and after the ID), for bool flags as for others, while a flag given once on
// either side of the ID reads as before, and nothing after "--" (localdb's
// command's own flags) counts.
func TestFlagGivenTwiceAcrossPasses(t *testing.T) {
	newFS := func() (*flag.FlagSet, *bool, *string) {
		fs := newFlags("keys revoke", "router keys revoke ID", "")
		fs.SetOutput(io.Discard)
		noWait := fs.Bool("no-wait", false, "")
		dir := fs.String("dir", "", "")
		return fs, noWait, dir
	}
	for _, args := range [][]string{
		{"--no-wait", "7", "--no-wait"},
		{"7", "--no-wait", "--no-wait=false"},
		{"--no-wait", "--no-wait", "7"},
	} {
		fs, _, _ := newFS()
		_, _, err := parseAroundArg(fs, args)
		if !errors.Is(err, errUsage) || !strings.Contains(err.Error(), "--no-wait given more than once") {
			t.Errorf("revoke %s: %v; want a usage error naming --no-wait given more than once", strings.Join(args, " "), err)
		}
	}
	for _, args := range [][]string{{"--no-wait", "7"}, {"7", "--no-wait"}, {"--dir", "a", "7", "--no-wait"}} {
		fs, noWait, _ := newFS()
		arg, rest, err := parseAroundArg(fs, args)
		if err != nil || arg != "7" || len(rest) != 0 || !*noWait {
			t.Errorf("revoke %s: arg %q, rest %q, no-wait %v, err %v; want 7 read with --no-wait", strings.Join(args, " "), arg, rest, *noWait, err)
		}
	}
	fs, _, dir := newFS()
	if err := parse(fs, []string{"--dir", "a", "--", "sh", "--dir", "b"}); err != nil || *dir != "a" {
		t.Errorf("localdb --dir a -- sh --dir b: dir %q, err %v; want a, the command's own flags not counted", *dir, err)
	}
	fs, _, _ = newFS()
	if err := parse(fs, []string{"--dir", "a", "--dir", "b", "--no-wait", "--no-wait"}); err == nil ||
		!strings.Contains(err.Error(), "--dir, --no-wait given more than once") || strings.Contains(err.Error(), `"a"`) {
		t.Errorf("--dir a --dir b --no-wait --no-wait: %v; want both named, once each, no value repeated", err)
	}
}
