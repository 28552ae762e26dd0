package main

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/routerhq/router/conformance"
	"github.com/routerhq/router/internal/config"
	"github.com/routerhq/router/internal/server"
)

const (
	configUsage      = "router config check [--config router.yaml]"
	configCheckUsage = "router config check [--config router.yaml]"
)

// runConfig is `router config`, whose one subcommand is check.
func runConfig(ctx context.Context, args []string) error {
	switch {
	case len(args) == 0:
		fmt.Fprintln(os.Stderr, "router config: which subcommand? check\n\nUsage: "+configUsage)
		return errUsage
	case len(args) == 2 && isHelp(args[0]) && slices.Contains(subcommands["config"], args[1]):
		return runConfig(ctx, []string{args[1], "--help"}) // `router config help check`
	case isHelp(args[0]):
		fmt.Fprintf(os.Stdout, "Usage: %s\n\nRun `router config check --help` for its flags.\n", configCheckUsage)
		return errHelpShown
	case args[0] == "check":
		return runConfigCheck(args[1:])
	}
	fmt.Fprintf(os.Stderr, "router config: unknown subcommand %q (check)\n\nUsage: %s\n", args[0], configUsage)
	return errUsage
}

// configInvalid is a configuration that `router config check` refused: said
// as it is, with exit status 2 (as a usage error: nothing was done).
type configInvalid struct{ err error }

func (e configInvalid) Error() string        { return e.err.Error() }
func (e configInvalid) Unwrap() error        { return e.err }
func (e configInvalid) Is(target error) bool { return target == errUsage }

// runConfigCheck loads and checks a configuration as `router serve` does
// before it touches the database — the file, the routes, the prompts
// directory against them, the providers' targets, the keys and webhook
// secrets read from the environment, the OpenTelemetry environment and the
// database URL serve would use (server.Check) — without listening, serving, or
// starting, connecting to or migrating a database. It prints the warnings
// serve would log (stderr) and a one-line summary (stdout), exit 0; or the
// problems, exit 2.
func runConfigCheck(args []string) error {
	fs := newFlags("config check", configCheckUsage,
		"Checks a configuration as `router serve` does before it touches the database: the file, the prompts directory against the routes, "+
			"the providers, the keys and webhook secrets in the environment, the OTEL_* variables and the database URL serve would use (parsed, not dialled) "+
			"(run it where serve would run, with the same environment). "+
			"Nothing listens and no database is started, connected to or migrated: run it with a new binary before a rolling upgrade. "+
			"Prints serve's start-up warnings on stderr and a one-line summary; exits 0 when serve would start, 2 with every problem otherwise.")
	cfgPath := configFlag(fs)
	if err := parseNoArgs(fs, args); err != nil {
		return err
	}
	cfg, err := config.Load(*cfgPath)
	if err != nil {
		return configInvalid{err}
	}
	if err := requireRoutes(cfg, *cfgPath, "`router serve` would serve no request (every job and chat completion would be refused)"); err != nil {
		return configInvalid{err}
	}
	checked, err := server.Check(cfg)
	if err != nil {
		return configInvalid{err}
	}
	for _, w := range checked.Warnings {
		fmt.Fprintln(os.Stderr, "warning:", w)
	}
	warned := ""
	if n := len(checked.Warnings); n > 0 {
		warned = fmt.Sprintf("; %d warning(s) above", n)
	}
	_, err = fmt.Printf("%s: valid for this binary (%s): %d provider(s), %d target(s), %d route(s), %d prompt(s); database: %s%s\n",
		*cfgPath, "router "+conformance.Version(), len(cfg.Providers), checked.Targets, len(cfg.Routes), checked.Prompts, databaseSource(cfg), warned)
	return err
}

// databaseSource says which database serve would use, without the URL
// (which may hold a password). The value decides which database, and where
// it came from is said with it: DATABASE_URL=embedded (config.Load has
// already put it in cfg.DatabaseURL) puts serve on the embedded development
// database, which a bare "DATABASE_URL" read as the shared PostgreSQL.
func databaseSource(cfg *config.Config) string {
	fromEnv := strings.TrimSpace(os.Getenv("DATABASE_URL")) != ""
	switch {
	case cfg.DatabaseURL == config.EmbeddedDatabase && fromEnv:
		return "the embedded development database (DATABASE_URL=embedded)"
	case cfg.DatabaseURL == config.EmbeddedDatabase:
		return "the embedded development database (database_url: embedded)"
	case fromEnv:
		return "DATABASE_URL"
	case cfg.DatabaseURL == "":
		return "the embedded development database (no database_url or DATABASE_URL; serve warns about it)"
	}
	return "database_url"
}
