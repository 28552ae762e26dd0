package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strconv"
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
	before := flagsGiven(fs) // set by an earlier pass (parseAroundArg)
	out := fs.Output()
	var buf bytes.Buffer
	fs.SetOutput(&buf)
	err := fs.Parse(args)
	fs.SetOutput(out)
	if errors.Is(err, flag.ErrHelp) {
		_, _ = help.Write(buf.Bytes())
		return errHelpShown
	}
	if err != nil {
		// The flag package's first line is the error ("flag provided but
		// not defined: -x"): prefixed with the command typed, as every
		// other error of a command is (run), so that `router jobs get …
		// --json` says which command has no such flag.
		fmt.Fprintf(out, "router %s: ", fs.Name())
	}
	_, _ = out.Write(buf.Bytes())
	if err != nil {
		return errUsage
	}
	if err := givenTwice(fs, args, before); err != nil {
		return err
	}
	return blankConfig(fs)
}

// givenTwice refuses a flag given more than once (`keys create --owner acme
// --owner globex`, a wrapper script's default and the operator's own): the
// flag package keeps the last value silently, so the key would be for the
// other tenant, `conformance run --provider p --provider q` would test q
// only. As a YAML key written twice, it is refused; no flag is meant to be
// repeated (--provider and --prompt take a comma-separated list). args are
// parsed again, by the flag package's own rules, into a FlagSet of the same
// flags that only counts them; before is what an earlier pass over the same
// command line set. The values are not repeated in the message: one may be a
// URL with a secret in it.
func givenTwice(fs *flag.FlagSet, args []string, before map[string]bool) error {
	seen := maps.Clone(before)
	var twice []string
	count := flag.NewFlagSet(fs.Name(), flag.ContinueOnError)
	count.SetOutput(io.Discard)
	count.Usage = func() {}
	fs.VisitAll(func(f *flag.Flag) {
		b, _ := f.Value.(interface{ IsBoolFlag() bool })
		count.Var(countFlag{isBool: b != nil && b.IsBoolFlag(), set: func() {
			if seen[f.Name] && !slices.Contains(twice, f.Name) {
				twice = append(twice, f.Name)
			}
			seen[f.Name] = true
		}}, f.Name, "")
	})
	_ = count.Parse(args) // fs parsed the same args without error
	if len(twice) == 0 {
		return nil
	}
	for i, name := range twice {
		twice[i] = "--" + name
	}
	it := "it"
	if len(twice) > 1 {
		it = "each"
	}
	return usagef("%s given more than once: give %s once (a later value does not replace an earlier one here); nothing was done",
		strings.Join(twice, ", "), it)
}

// countFlag is a flag of givenTwice's FlagSet: it only reports each time it
// is given, parsed as a bool flag when the flag it stands for is one.
type countFlag struct {
	isBool bool
	set    func()
}

func (c countFlag) String() string   { return "" }
func (c countFlag) IsBoolFlag() bool { return c.isBool }
func (c countFlag) Set(string) error { c.set(); return nil }

// blankConfig refuses a --config given but blank (`--config "$CFG"` with
// $CFG unset): read as given, it failed as a file that cannot be read (exit
// 1), as if something had gone wrong while running rather than on the
// command line. Every command with --config parses through parseHelpTo.
func blankConfig(fs *flag.FlagSet) error {
	f := fs.Lookup("config")
	if f == nil || !flagsGiven(fs)["config"] || strings.TrimSpace(f.Value.String()) != "" {
		return nil
	}
	return usagef("--config %q names no file: give the path of the router's YAML configuration file (e.g. --config demo/router.yaml), "+
		"or leave --config out to read %s", f.Value.String(), config.DefaultPath)
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

// parseAroundArg is parse for a command that takes one word (an ID) before,
// between or after its flags: `revoke 7 --no-wait`, `revoke --no-wait 7` and
// `revoke --config prod.yaml 7 --no-wait` all read the same. The flag package
// stops at the first word, so the flags after it are parsed in a second pass;
// after "--" nothing more is read as a flag. arg is that word ("" when there
// is none) and rest what is left after it and its flags, for the caller to
// refuse.
func parseAroundArg(fs *flag.FlagSet, args []string) (arg string, rest []string, err error) {
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		arg, args = args[0], args[1:]
	}
	if err := parse(fs, args); err != nil {
		return "", nil, err
	}
	rest = fs.Args()
	if arg != "" || len(rest) == 0 {
		return arg, rest, nil
	}
	arg, rest = rest[0], rest[1:]
	if i := len(args) - len(rest) - 2; i >= 0 && args[i] == "--" {
		return arg, rest, nil
	}
	if err := parse(fs, rest); err != nil {
		return "", nil, err
	}
	return arg, fs.Args(), nil
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

// intFlag is an integer flag's value read in decimal, as an operator writes a
// number: fs.Int reads Go's syntax, in which --limit 010 is 8 (octal) and
// 0x10 is 16. Here a leading zero is only a zero (010 is 10), and another
// base, a fraction or a word is refused as a bad flag value (exit 2), saying
// what to give. Every integer flag of every command is one (intVar).
type intFlag int

func (n *intFlag) String() string { return strconv.Itoa(int(*n)) }

func (n *intFlag) Set(s string) error {
	v, err := strconv.ParseInt(s, 10, strconv.IntSize)
	switch {
	case errors.Is(err, strconv.ErrRange):
		return fmt.Errorf("%s is out of range: give a smaller number", s)
	case err != nil:
		return fmt.Errorf("not a whole number in decimal: give digits only, such as 100 " +
			"(a leading 0 does not make it octal, and 0x…, 0o…, 0b…, _ and fractions are not taken)")
	}
	*n = intFlag(v)
	return nil
}

// intVar defines an integer flag read in decimal (intFlag), as fs.Int would
// define it. Its usage names its value's placeholder in backquotes, as fs.Var
// expects (`N`): without one, help would call it "value".
func intVar(fs *flag.FlagSet, name string, value int, usage string) *int {
	p := new(int)
	*p = value
	fs.Var((*intFlag)(p), name, usage)
	return p
}
