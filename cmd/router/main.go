// Command router is the multi-provider inference router: `router serve` runs it,
// and the other subcommands manage its database, keys and jobs. Run
// `router help` for the list.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"slices"
	"strings"
	"syscall"
)

type command struct {
	name, usage, summary string
	run                  func(ctx context.Context, args []string) error
	hidden               bool
}

func commands() []command {
	return []command{
		{"serve", "router serve [--config router.yaml] [--debug-listen 127.0.0.1:6060]", "run the router's HTTP API", runServe, false},
		{"migrate", "router migrate [--config router.yaml]", "apply the embedded database migrations", runMigrate, false},
		{"config", configUsage, "check a configuration as serve does before it touches the database, without serving", runConfig, false},
		{"keys", "router keys create|list|revoke|rotate-webhook-secret|forget-removed-webhook ...", "create, list and revoke API keys; rotate an owner's webhook signing secret; forget a removed configured webhook", runKeys, false},
		{"jobs", "router jobs get ID | list [--state S] [--owner O] [--limit N] [--json]", "print a job with its attempts, or list the jobs of every owner that have not ended", runJobs, false},
		{"conformance", conformanceUsage, "run the conformance suites against providers and record the results", runConformance, false},
		{"localdb", "router localdb [--dir DIR] [--durable] -- COMMAND [ARGS...]", "run COMMAND with DATABASE_URL set to a private local PostgreSQL", runLocalDB, false},
		{"version", "router version (or router --version)", "print this binary's version, source revision and Go version", runVersion, false},
	}
}

// subcommands are the subcommands of the commands that have them: an error
// is said under the command the user typed (`router keys create: …`).
var subcommands = map[string][]string{
	"keys":        {"create", "list", "revoke", "rotate-webhook-secret", "forget-removed-webhook"},
	"jobs":        {"get", "list"},
	"conformance": {"run"},
	"config":      {"check"},
}

// commandPath is the command args (what follows `router`) name, as its
// errors are prefixed: "router keys create", or "router keys" when the
// subcommand is missing or unknown.
func commandPath(args []string) string {
	path := "router " + args[0]
	if len(args) > 1 && slices.Contains(subcommands[args[0]], args[1]) {
		path += " " + args[1]
	}
	return path
}

func main() {
	ctx, stop := signalContext()
	code := run(ctx, os.Args[1:])
	stop()
	os.Exit(code)
}

func run(ctx context.Context, args []string) int {
	if len(args) > 1 && args[0] == "help" && !isHelp(args[1]) {
		return helpFor(ctx, args[1:])
	}
	if len(args) == 0 || args[0] == "help" || args[0] == "-h" || args[0] == "--help" {
		// Asked for (no command at all reads as asking what there is): on
		// stdout, as a command's output, so that `router help | less` shows
		// it. Usage printed for an error goes to stderr, with exit 2.
		usage(os.Stdout)
		return 0
	}
	if args[0] == "--version" || args[0] == "-version" {
		args = append([]string{"version"}, args[1:]...)
	}
	for _, c := range commands() {
		if c.name == args[0] {
			if err := c.run(ctx, args[1:]); err != nil {
				name := commandPath(args)
				switch {
				case errors.Is(err, errHelpShown): // help was asked for and printed; nothing ran
					return 0
				case errors.Is(err, errUsage):
					if err != errUsage { // it says what is wrong; the bare one was said already
						fmt.Fprintln(os.Stderr, name+":", err)
					}
					return 2
				}
				if brokenStdout(err) {
					// The reader of the output is gone (`router jobs list
					// --json | head -1`): it had what it wanted, and a
					// Unix tool stops there quietly, killed by SIGPIPE —
					// which the router catches (signalContext). Exit as a
					// shell reports such a tool, 128+SIGPIPE: a pipeline
					// under `set -o pipefail` still sees that the output
					// was cut.
					return 128 + int(syscall.SIGPIPE)
				}
				fmt.Fprintln(os.Stderr, name+":", err)
				if ce := (childExit{}); errors.As(err, &ce) && ce.code > 0 {
					return ce.code // localdb's command's own status
				}
				if se := (stoppedError{}); errors.As(err, &se) {
					return se.exitCode() // 128 + the signal, as a shell reports a process it ended
				}
				return 1
			}
			return 0
		}
	}
	fmt.Fprintf(os.Stderr, "router: unknown command %q\n\n", args[0])
	usage(os.Stderr)
	return 2
}

// brokenStdout reports whether err is a write to stdout that failed because
// its reader is gone (EPIPE). An EPIPE elsewhere (a connection to the
// database cut) is a failure like any other; so is a closed stdout that a
// command reports in words of its own (`router keys create`: the key was
// rolled back), which does not wrap the write's error.
func brokenStdout(err error) bool {
	var pe *fs.PathError
	return errors.As(err, &pe) && pe.Op == "write" && pe.Path == os.Stdout.Name() && errors.Is(pe.Err, syscall.EPIPE)
}

// helpFor is `router help COMMAND [SUBCOMMAND]`: it prints what `router
// COMMAND [SUBCOMMAND] --help` prints, and runs nothing. Only keys, jobs, config and
// conformance have subcommands; any other word is refused, never passed on
// (`router help localdb touch x` must not run touch).
func helpFor(ctx context.Context, args []string) int {
	for _, c := range commands() {
		if c.name != args[0] {
			continue
		}
		help := []string{"--help"}
		switch {
		case len(args) == 2 && subcommands[c.name] != nil && !strings.HasPrefix(args[1], "-"):
			help = []string{args[1], "--help"}
		case len(args) > 1:
			fmt.Fprintf(os.Stderr, "router help: unexpected %q: give a command, and for keys, jobs, config or conformance one subcommand (`router help keys create`)\n",
				strings.Join(args[1:], " "))
			return 2
		}
		if err := c.run(ctx, help); err != nil && !errors.Is(err, errHelpShown) {
			if err != errUsage { // the bare one was said already
				fmt.Fprintln(os.Stderr, "router help "+c.name+":", err)
			}
			return 2
		}
		return 0
	}
	fmt.Fprintf(os.Stderr, "router help: unknown command %q\n\n", args[0])
	usage(os.Stderr)
	return 2
}

// usage prints the commands on w: stdout when help was asked for, stderr
// when it explains an error.
func usage(w io.Writer) {
	fmt.Fprintln(w, "Usage: router COMMAND [flags]\n\nCommands:")
	// The names' column is as wide as the longest (conformance), so that no
	// summary runs into its name.
	width := 0
	for _, c := range commands() {
		if !c.hidden {
			width = max(width, len(c.name))
		}
	}
	for _, c := range commands() {
		if !c.hidden {
			fmt.Fprintf(w, "  %-*s  %s\n  %*s  %s\n", width, c.name, c.summary, width, "", c.usage)
		}
	}
	fmt.Fprintln(w, "\nRun `router COMMAND --help` (or `router help COMMAND`) for a command's flags.")
	fmt.Fprint(w, exitStatuses)
}

// exitStatuses is the end of `router help`: what a script can tell from a
// command's exit status (docs/operations.md, "The command line").
const exitStatuses = `
Exit statuses:
  0    success, or help was shown (router serve: also when SIGTERM, Ctrl-C or SIGHUP stopped it)
  1    the command failed while running; the message says what to do
  2    the command line is wrong (an unknown flag, a missing --owner); nothing was done
  129  SIGHUP, 130 Ctrl-C (SIGINT), 143 SIGTERM (128 + the signal): a signal interrupted
       router conformance run, or ended the command of router localdb
  141  the reader of stdout went away (router jobs list | head -1): stopped quietly, 128 + SIGPIPE
`
