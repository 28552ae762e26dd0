package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"
)

// errUsage: the flags were wrong; usage was already printed.
var errUsage = errors.New("usage")

// errHelpShown: the user asked for help (-h, --help) and it was printed. The
// command must stop without acting; the process exits 0.
var errHelpShown = errors.New("help shown")

func newFlags(name, usage, summary string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: %s\n\n%s\n\nFlags:\n", usage, summary)
		fs.PrintDefaults()
	}
	fs.SetOutput(os.Stderr)
	return fs
}

// parse parses args. It returns errHelpShown when they ask for help (after
// printing it) and errUsage when they are wrong (after saying why): either way
// the caller returns the error at once, before doing anything.
func parse(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return errHelpShown
		}
		return errUsage
	}
	return nil
}

// parseNoArgs is parse for a command that takes no arguments besides its
// flags: a leftover word (`router migrate help`, or a flag after one, which
// the flag package stops at) is refused, naming it, instead of being ignored
// while the command acts.
func parseNoArgs(fs *flag.FlagSet, args []string) error {
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(fs.Output(), "router %s: unexpected argument %q: it takes only flags (and reads none after a word that is not one); remove it, or see `router %s --help`\n",
			fs.Name(), strings.Join(fs.Args(), " "), fs.Name())
		return errUsage
	}
	return nil
}

// isHelp reports whether arg asks for help in a place where a subcommand or
// a positional argument is expected.
func isHelp(arg string) bool {
	switch arg {
	case "-h", "-help", "--help", "help":
		return true
	}
	return false
}

func configFlag(fs *flag.FlagSet) *string {
	return fs.String("config", "router.yaml", "path of the YAML configuration file")
}
