package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/routerhq/router/conformance"
	"github.com/routerhq/router/internal/config"
	"github.com/routerhq/router/internal/race"
	"github.com/routerhq/router/internal/server"
	"github.com/routerhq/router/internal/store"
)

const conformanceUsage = "router conformance run [--provider P[,Q]] [--prompt X[,Y]] [--json] [--suites DIR] [--concurrency N] [--temperature T] [--config router.yaml]"

const conformanceSummary = `Runs the conformance suites (conformance/suites/<prompt>/suite.yaml) against the
configured providers: for each provider × prompt, every case must render
completely, round-trip through the provider's tokenizer without special tokens,
fit its context window with max_tokens, and come back from a real round trip (at
the suite's temperature, 0 by default) passing the prompt's schema, contract and
the case's expectations. Results are recorded in PostgreSQL, where the router's
conformance gate reads them: a provider is eligible for failover and hedging on
prompt X@V only with a passing run of exactly X@V younger than conformance.max_age,
of the model the target sends and of the prompt's current content. Each target
runs with its own model (the prompt's model, when it names one); a target of a
route with a conformance_prompt and a models list also runs that prompt with each
of those models, which chat completions may ask for instead.
A result whose only failures are transient provider errors (rate limited,
unavailable or overloaded, a refused or reset connection) is inconclusive: it is not
recorded, so the gate keeps judging that provider by its previous runs; rerun
it. A run at a temperature above 0.5 is exploratory: reported, never recorded.
Prints a table (or --json) and exits 1 when anything failed, was inconclusive,
exploratory or not recorded, 130 (Ctrl-C) or 143 (SIGTERM) when a signal
interrupted it, 2 on bad flags
(--provider or --prompt naming nothing, "" included, or a name not configured;
--suites or --temperature given as ""; --concurrency below 1).`

// errConformanceFailed: the run completed and something failed.
var errConformanceFailed = errors.New("conformance failed")

func runConformance(ctx context.Context, args []string) error {
	return conformanceCommand(ctx, args, os.Stdout, os.Stderr)
}

// conformanceCommand is `router conformance ...` writing the report to stdout. It
// returns nil only when every provider passed every selected suite, and
// errHelpShown, having run nothing, when asked for help.
func conformanceCommand(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 || args[0] != "run" {
		if len(args) > 0 && isHelp(args[0]) {
			// run is the one subcommand: its help, flags included.
			return conformanceCommand(ctx, []string{"run", "--help"}, stdout, stderr)
		}
		// Said as `router keys` and `router jobs` say it, prefixed with
		// the command typed and naming the word that is no subcommand.
		if len(args) == 0 {
			fmt.Fprintf(stderr, "router conformance: which subcommand? run\n\nUsage: %s\n", conformanceUsage)
		} else {
			fmt.Fprintf(stderr, "router conformance: unknown subcommand %q (run is the one)\n\nUsage: %s\n", args[0], conformanceUsage)
		}
		return errUsage
	}
	fs := flag.NewFlagSet("conformance run", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: %s\n\n%s\n\nFlags:\n", conformanceUsage, conformanceSummary)
		fs.PrintDefaults()
	}
	cfgPath := configFlag(fs)
	providersFlag := fs.String("provider", "", "run only these targets: provider names (a provider with no model of its own: all its route targets) or route target ids (provider/model), comma-separated")
	promptsFlag := fs.String("prompt", "", "run only these prompts (comma-separated names)")
	asJSON := fs.Bool("json", false, "print the report as JSON instead of a table")
	suitesDir := fs.String("suites", "", "directory holding <prompt>/suite.yaml (default: conformance/suites if it exists, else conformance/suites beside prompts_dir)")
	concurrency := intVar(fs, "concurrency", 4, "test `N` providers at once (1 or more)")
	tempFlag := fs.String("temperature", "", fmt.Sprintf("override the suites' temperature (default: each suite's, 0 when unset); above %g the run is exploratory: reported, not recorded for the gate", conformance.MaxGateTemperature))
	if err := parseHelpTo(fs, args[1:], stdout); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return runUsagef(stderr, "unexpected argument %q: it takes only flags (and reads none after a word that is not one); remove it, or see `router conformance run --help`\nUsage: %s",
			strings.Join(fs.Args(), " "), conformanceUsage)
	}
	if *concurrency < 1 {
		return runUsagef(stderr, "--concurrency: %d is not a number of providers to test at once: give 1 or more", *concurrency)
	}
	// --suites or --temperature given but blank (`--suites "$DIR"` with $DIR
	// unset) is refused, not read as left out: the default suites would run,
	// billing every provider, and be recorded as this run.
	given := flagsGiven(fs)
	if given["suites"] && strings.TrimSpace(*suitesDir) == "" {
		return usagef("--suites %q names no directory: name one, or leave --suites out for the default (conformance/suites)", *suitesDir)
	}
	if given["temperature"] && strings.TrimSpace(*tempFlag) == "" {
		return usagef("--temperature %q is not a number: give one from 0 to 2, or leave --temperature out for each suite's own (0 when unset)", *tempFlag)
	}
	var temperature *float32
	if *tempFlag != "" {
		t, err := strconv.ParseFloat(*tempFlag, 32)
		if err != nil || !(t >= 0 && t <= 2) { // NaN too
			return runUsagef(stderr, "--temperature: %q is not a number from 0 to 2: give one in that range, or leave --temperature out for each suite's own (0 when unset)", *tempFlag)
		}
		t32 := float32(t)
		temperature = &t32
	}

	cfg, err := config.Load(*cfgPath)
	if err != nil {
		return err
	}
	if err := requireRoutes(cfg, *cfgPath, "the conformance gate, which judges the targets of routes, has nothing here to judge: run it with the router's own configuration"); err != nil {
		return err
	}
	prompts, err := server.LoadPrompts(cfg)
	if err != nil {
		return err
	}
	// Names that are not in the configuration, and a --provider or --prompt
	// given but naming nothing (an unset shell variable), are the command
	// line's fault: refuse them here, exit 2, before the suites are read, a
	// target is built (which needs its API key) or the database is touched.
	providerNames, promptNames := splitList(*providersFlag), splitList(*promptsFlag)
	var ids []string
	for _, t := range cfg.AllTargets() {
		ids = append(ids, t.ID)
	}
	slices.Sort(ids)
	if err := selection("--provider", "target", "target ids", given["provider"], *providersFlag, providerNames, ids); err != nil {
		return err
	}
	if providerNames, err = targetIDs(cfg, providerNames); err != nil {
		return err
	}
	if err := knownNames("--provider", "providers and route targets of "+*cfgPath, providerNames, ids); err != nil {
		return err
	}
	var loaded []string
	for _, p := range prompts.All() {
		loaded = append(loaded, p.Name)
	}
	if err := selection("--prompt", "prompt", "prompt names", given["prompt"], *promptsFlag, promptNames, loaded); err != nil {
		return err
	}
	if err := knownNames("--prompt", "prompts in "+server.Resolve(cfg, cfg.PromptsDir)+"/", promptNames, loaded); err != nil {
		return err
	}
	dir := *suitesDir
	if dir == "" {
		dir = defaultSuitesDir(cfg)
	}
	suites, err := conformance.LoadDir(dir)
	if err != nil {
		return err
	}
	// Only the selected targets are built: a run of one provider needs its
	// API key, not every provider's.
	targets, err := server.BuildSelectedTargets(cfg, providerNames)
	if err != nil {
		return err
	}
	if err := server.CommandDatabase(cfg); err != nil {
		return err
	}
	if len(prompts.All()) == 0 {
		// Not "nothing to run", exit 0: an empty prompts directory (a
		// volume not mounted, a wrong path) would pass the gate while
		// testing nothing.
		return fmt.Errorf("no prompt loaded from %s/ (prompts_dir in %s): there is nothing to test, so the run does not pass; "+
			"check that prompts_dir names the directory holding the prompts (is the volume mounted?), or run it with the configuration of a router that has prompts",
			server.Resolve(cfg, cfg.PromptsDir), *cfgPath)
	}
	log, err := server.Logger(cfg.Log)
	if err != nil {
		return err
	}
	// From here on, an error after a signal (the connection or the
	// migration cut short) is the signal's: exit 128+signal, as for a run
	// it interrupts (stoppedError), not 1, a failure.
	pool, closeDB, err := server.OpenDatabase(ctx, cfg, log)
	if err != nil {
		return stoppedBySignal(ctx, err)
	}
	defer closeDB()
	st := store.New(pool, store.Options{KeyRetention: cfg.Idempotency.Retention.D(), Log: log})
	if err := prepareSchema(ctx, cfg, st, *cfgPath); err != nil {
		return stoppedBySignal(ctx, err)
	}

	opt := conformance.Options{
		Store: st, Targets: targets, Configured: server.ConfiguredTargets(cfg), Prompts: prompts, Suites: suites,
		Providers: providerNames, PromptNames: promptNames, SuitesDir: dir,
		Concurrency: *concurrency, Temperature: temperature, Gate: cfg.Conformance.Gate,
		ChatRoutes:    server.ConformanceChatRoutes(cfg),
		TargetDigests: conformance.TargetDigests(cfg),
		// The same backoff as the race's retries on one provider.
		Retry: race.Backoff{Base: cfg.Execution.Retry.Base.D(), Cap: cfg.Execution.Retry.Cap.D(),
			MaxRetryAfter: cfg.Execution.Retry.MaxRetryAfter.D()},
		// The first Ctrl-C ends the run but lets a finished result's
		// recording finish (within conformance.DefaultRecordTimeout); the
		// second ends that recording too, the result reported not recorded.
		Stop: secondSignal(ctx),
	}
	var progress *conformance.ProgressLine
	if !*asJSON && isTerminal(stdout) {
		progress = &conformance.ProgressLine{W: stdout}
		opt.Progress = progress.Update
	}
	rep, runErr := conformance.Run(ctx, opt)
	if progress != nil {
		progress.Done()
	}
	if rep != nil {
		rep.SuitesDir = dir
		var werr error
		if *asJSON {
			werr = rep.WriteJSON(stdout)
		} else {
			werr = rep.WriteTable(stdout)
		}
		if werr != nil && runErr == nil {
			runErr = werr
		}
	}
	// A run a signal interrupted exits 128+signal (stoppedError), so that a
	// script tells it from a run whose targets failed (1). One the signal
	// came too late to interrupt (the last result being recorded) is a
	// finished run, and exits as one.
	if runErr != nil {
		err := migrationHint(runErr, *cfgPath)
		if rep == nil || rep.Interrupted {
			err = stoppedBySignal(ctx, err)
		}
		return err
	}
	if !rep.Passed {
		err := fmt.Errorf("%w: %s", errConformanceFailed, rep.Consequence())
		if rep.Interrupted {
			err = stoppedBySignal(ctx, err)
		}
		return err
	}
	return nil
}

// runUsagef says a usage error of `router conformance run` on stderr, prefixed
// with the command typed as run prefixes every command's errors, and returns
// errUsage (exit 2; said already, run says nothing more).
func runUsagef(stderr io.Writer, format string, a ...any) error {
	fmt.Fprintf(stderr, "router conformance run: "+format+"\n", a...)
	return errUsage
}

// defaultSuitesDir is conformance/suites under the working directory when it
// exists, else conformance/suites beside the prompts directory.
func defaultSuitesDir(cfg *config.Config) string {
	const rel = "conformance/suites"
	if fi, err := os.Stat(rel); err == nil && fi.IsDir() {
		return rel
	}
	return filepath.Join(server.Resolve(cfg, cfg.PromptsDir), "..", rel)
}

// knownNames is a usage error naming flag and what it may name (have, which
// is in the configuration) when a name in names is not one of them.
func knownNames(flag, what string, names, have []string) error {
	var unknown []string
	for _, n := range names {
		if !slices.Contains(have, n) {
			unknown = append(unknown, n)
		}
	}
	if len(unknown) == 0 {
		return nil
	}
	list := "there are none"
	if len(have) > 0 {
		list = "choose from " + strings.Join(have, ", ")
	}
	return usagef("%s %s: not among the %s (%s)", flag, strings.Join(unknown, ","), what, list)
}

// flagsGiven is the set of the names of the flags the command line set,
// whatever their values: `--provider ""` is given, and empty.
func flagsGiven(fs *flag.FlagSet) map[string]bool {
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	return given
}

// selection is a usage error when a list flag was given (value as typed) but
// names nothing (names, from splitList, is empty): `--provider "$P"` with $P
// unset must not mean "no filter", which would test — and bill — every
// target, with every provider's API key required. have is what the flag may
// name: things of kind, named by their idWord (e.g. "target ids").
func selection(flag, kind, idWord string, given bool, value string, names, have []string) error {
	if !given || len(names) > 0 {
		return nil
	}
	list := "there are none"
	if len(have) > 0 {
		list = "configured: " + strings.Join(have, ", ")
	}
	return usagef("%s %q names no %s: give %s separated by commas (%s), or leave %s out to run every %s",
		flag, value, kind, idWord, list, flag, kind)
}

// splitList is the comma-separated names in s, spaces around them trimmed and
// empty ones dropped; a flag that was given and splits to none is refused by
// selection rather than read as "all".
func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// isTerminal reports whether w is a character device (a terminal).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}
