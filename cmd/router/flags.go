package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/routerhq/router/internal/config"
)

// errUsage: the flags were wrong; usage was already printed.
var errUsage = errors.New("usage")

// usageError is a usage error that says what is wrong with the command line
// (a missing flag, an argument that cannot be what it names): run prints it
// and exits 2, as for errUsage, since nothing ran and retrying as is cannot
// help.
type usageError struct{ msg string }

func (e usageError) Error() string        { return e.msg }
func (e usageError) Is(target error) bool { return target == errUsage }

// usagef is a usageError with a message formatted as by fmt.Sprintf.
func usagef(format string, a ...any) error { return usageError{fmt.Sprintf(format, a...)} }

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
// printing it on stdout) and errUsage when they are wrong (after saying why on
// fs's output, stderr): either way the caller returns the error at once,
// before doing anything.
func parse(fs *flag.FlagSet, args []string) error {
	return parseHelpTo(fs, args, os.Stdout)
}

// parseHelpTo is parse printing requested help on help. Help asked for is
// the command's output (exit 0), so it goes where output goes: `router serve
// --help | less` shows it. Usage printed because the flags are wrong stays on
// fs's output, with the error. The flag package prints both through the same
// output, so what it prints is held until Parse says which it was.
func parseHelpTo(fs *flag.FlagSet, args []string, help io.Writer) error {
	out := fs.Output()
	var buf bytes.Buffer
	fs.SetOutput(&buf)
	err := fs.Parse(args)
	fs.SetOutput(out)
	if errors.Is(err, flag.ErrHelp) {
		_, _ = help.Write(buf.Bytes())
		return errHelpShown
	}
	_, _ = out.Write(buf.Bytes())
	if err != nil {
		return errUsage
	}
	return nil
}

// showHelp prints fs's help on stdout, as asked for (`router keys revoke
// help`), and returns errHelpShown.
func showHelp(fs *flag.FlagSet) error {
	out := fs.Output()
	fs.SetOutput(os.Stdout)
	fs.Usage()
	fs.SetOutput(out)
	return errHelpShown
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
	return fs.String("config", config.DefaultPath, "path of the YAML configuration file")
}
