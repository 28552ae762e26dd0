package main

import (
	"slices"
	"testing"
)

// parseAroundArg reads the one word a command takes before, between or after
// its flags; what is left after it (a second ID, a word after "--") is the
// caller's to refuse.
func TestParseAroundArg(t *testing.T) {
	for _, c := range []struct {
		args   []string
		arg    string
		rest   []string
		noWait bool
		config string
	}{
		{args: []string{"7", "--no-wait"}, arg: "7", noWait: true},
		{args: []string{"--no-wait", "7"}, arg: "7", noWait: true},
		{args: []string{"--config", "c.yaml", "7", "--no-wait"}, arg: "7", noWait: true, config: "c.yaml"},
		{args: []string{"--config", "c.yaml", "7", "8"}, arg: "7", rest: []string{"8"}, config: "c.yaml"},
		{args: []string{"--config", "c.yaml", "7", "--no-wait", "8"}, arg: "7", rest: []string{"8"}, noWait: true, config: "c.yaml"},
		{args: []string{"7", "8", "--no-wait"}, arg: "7", rest: []string{"8", "--no-wait"}},
		{args: []string{"--", "7", "--no-wait"}, arg: "7", rest: []string{"--no-wait"}},
		{args: []string{"--no-wait"}, noWait: true},
		{args: nil},
	} {
		fs := newFlags("keys revoke", "router keys revoke ID", "")
		noWait := fs.Bool("no-wait", false, "")
		config := fs.String("config", "", "")
		arg, rest, err := parseAroundArg(fs, c.args)
		if err != nil || arg != c.arg || !slices.Equal(rest, c.rest) || *noWait != c.noWait || *config != c.config {
			t.Errorf("%q: arg %q rest %q no-wait %v config %q err %v; want arg %q rest %q no-wait %v config %q",
				c.args, arg, rest, *noWait, *config, err, c.arg, c.rest, c.noWait, c.config)
		}
	}
}
