package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/routerhq/router/internal/localpg"
)

// childStopBudget is how long a command asked to stop (SIGTERM, when localdb
// itself is told to stop) has to exit before it is killed: time for `go test`
// to stop its test binaries and for them to clean up, so none is left running
// against a server that is being stopped.
const childStopBudget = 10 * time.Second

// runLocalDB runs a command with DATABASE_URL pointing at a private local
// PostgreSQL, then stops what the command left running (stopLeftovers) and
// the server. `make test` uses it (SPEC §13).
func runLocalDB(ctx context.Context, args []string) error {
	fs := newFlags("localdb", "router localdb [--dir DIR] [--durable] -- COMMAND [ARGS...]",
		"Starts a private PostgreSQL from the machine's binaries (installing them when missing and run as root), "+
			"runs COMMAND with DATABASE_URL set, and stops the server, after any process COMMAND left running. "+
			"With DATABASE_URL already set, runs COMMAND as is, and refuses --dir and --durable, which are for a server of its own. "+
			"Exits with COMMAND's exit status.")
	dir := fs.String("dir", ".local/pg-test", "data directory, deleted and recreated: new, empty, or one an earlier localdb made")
	durable := fs.Bool("durable", false, "keep fsync on (off is faster for tests)")
	if err := parse(fs, args); err != nil {
		return err
	}
	rest := fs.Args()
	if len(rest) == 0 {
		fmt.Fprintln(fs.Output(), "router localdb: which command? Give it after --, e.g. router localdb -- go test ./...")
		fs.Usage()
		return errUsage
	}
	if isHelp(rest[0]) {
		// `router localdb help` asks for help, as for every other command:
		// it must not wipe --dir and start a server to run a command "help".
		return showHelp(fs)
	}
	if _, err := exec.LookPath(rest[0]); err != nil {
		// Found before --dir is deleted and a server started, not after.
		return usagef("cannot run %q: %v; nothing was started and --dir was left as it is: check the command's spelling, "+
			"or give its path (e.g. ./script.sh)", rest[0], errors.Unwrap(err))
	}
	if v, set := os.LookupEnv("DATABASE_URL"); set && v != "" && strings.TrimSpace(v) == "" {
		// As the configuration refuses it: read as unset, the command would
		// run on a fresh database while its caller meant another one.
		return usagef("DATABASE_URL is set but empty or only white space: unset it for localdb to start a PostgreSQL of its own, or set it to the PostgreSQL URL to use")
	}
	if os.Getenv("DATABASE_URL") != "" {
		if err := flagsWithURL(flagsGiven(fs)); err != nil {
			return err
		}
	}
	if os.Getenv("DATABASE_URL") == "" {
		if err := checkDataDir(*dir); err != nil {
			return err
		}
		log := slog.New(slog.NewTextHandler(os.Stderr, nil))
		c, err := localpg.Start(ctx, localpg.Options{DataDir: *dir, Fresh: true, Durable: *durable, Logger: log})
		if errors.Is(err, localpg.ErrInUse) {
			// Another start of it under way (`make run`, another localdb),
			// or its server started since checkDataDir looked.
			return usagef("--dir %v; localdb deletes and recreates its data directory, so it refuses this one "+
				"(nothing was deleted); give another directory, or stop what uses it first", err)
		}
		if err != nil && ctx.Err() != nil {
			// Stopped by a signal before the command ran: 128 + the signal,
			// as when it arrives once the server is ready (stoppedCommand),
			// not 1 with the start's "context canceled".
			return stoppedBySignal(ctx, fmt.Errorf("stopped while its PostgreSQL was starting; %s was not run", rest[0]))
		}
		if err != nil {
			return err
		}
		defer c.Stop()
		os.Setenv("DATABASE_URL", c.URL)
	}
	cmd := exec.CommandContext(ctx, rest[0], rest[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	mark := newRunMark()
	cmd.Env = append(os.Environ(), mark)
	// Told to stop, ask the command to stop as well, rather than kill it
	// (CommandContext's default): killed, it could not stop what it runs in
	// turn (go test's test binaries), which would go on after the server is
	// gone.
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = childStopBudget
	err := cmd.Run()
	// What the command started and left running — all of go test's test
	// binaries when `go`, asked to stop, died at once — is stopped before
	// the server is (the deferred Stop), not left running against it.
	stopLeftovers(mark, rest[0], childStopBudget)
	if ctx.Err() != nil {
		return stoppedCommand(ctx, rest[0], cmd.ProcessState, err)
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			// Exit as a shell reports it (137 for the OOM killer's SIGKILL,
			// 134 for an abort), not 1, which reads as a failed command.
			return childExit{name: rest[0], code: 128 + int(ws.Signal()), killedBy: ws.Signal()}
		}
		return childExit{name: rest[0], code: ee.ExitCode()}
	}
	return err
}

// stoppedCommand is localdb's verdict when a signal stopped it (ctx ended)
// and it asked its command to stop: still the command's own exit status, as
// documented, so that a command that stops cleanly when asked (`router
// serve`'s drain, exit 0) is not turned into a failure. A command that exited
// 0 makes localdb exit 0, and one that exited N, N. A command ended by a
// signal (SIGTERM's default action; SIGKILL past childStopBudget) has no
// status of its own: localdb exits 128 plus the signal that stopped it
// (stoppedError: 130 for Ctrl-C, 143 for SIGTERM), as `router conformance
// run` does, and as a shell reports the command. ps is nil when the command
// never started; err is what Run returned (ctx's error for a command that
// exited 0 after being asked to stop).
func stoppedCommand(ctx context.Context, name string, ps *os.ProcessState, err error) error {
	if ps == nil {
		return stoppedBySignal(ctx, fmt.Errorf("%s was not started (%v)", name, err))
	}
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return stoppedBySignal(ctx, fmt.Errorf("%s, asked to stop, was ended by signal %v", name, ws.Signal()))
	}
	if code := ps.ExitCode(); code != 0 {
		return childExit{name: name, code: code, stopped: context.Cause(ctx)}
	}
	return nil
}

// flagsWithURL refuses --dir and --durable given (any value) while
// DATABASE_URL is set: localdb starts no server then, so they would be
// ignored, and COMMAND would run on the exported database (make bench,
// meant for a durable private one, on a shared one).
func flagsWithURL(given map[string]bool) error {
	var named []string
	for _, f := range []string{"--dir", "--durable"} {
		if given[f[2:]] {
			named = append(named, f)
		}
	}
	if len(named) == 0 {
		return nil
	}
	flags := strings.Join(named, " and ")
	return usagef("%s given while DATABASE_URL is set: localdb starts no PostgreSQL of its own then, so it would ignore %s "+
		"and run the command on DATABASE_URL's database; unset DATABASE_URL for a private server (prefix the command with env -u DATABASE_URL), "+
		"or drop %s to use DATABASE_URL's database", flags, flags, flags)
}

// childExit is localdb's command ending with a non-zero status, which becomes
// localdb's own, so a caller (make, CI, a script) sees the command's verdict:
// `go vet` and `go test` tell failures from bad usage by it.
type childExit struct {
	name    string
	code    int
	stopped error // what stopped localdb (context.Cause), when it asked the command to stop; nil otherwise
	// killedBy is the signal that ended the command when localdb was not
	// told to stop (code is then 128 plus it); 0 when the command exited.
	killedBy syscall.Signal
}

func (e childExit) Error() string {
	if e.killedBy != 0 {
		return fmt.Sprintf("%s was killed by signal %v", e.name, e.killedBy)
	}
	if e.stopped != nil {
		return fmt.Sprintf("%s, asked to stop (%v), exited with status %d", e.name, e.stopped, e.code)
	}
	return fmt.Sprintf("%s exited with status %d", e.name, e.code)
}

// checkDataDir refuses a --dir that localdb must not delete: it recreates its
// data directory, so a directory holding anything but a PostgreSQL cluster
// (the project, a home directory, a typo) would be lost, and so would the
// cluster of a server running there (`make run`'s .local/pg, another `make
// test`), pulled from under it, and a stopped cluster it did not make: the
// one `make run` keeps its data in (localpg.KeptData), another PostgreSQL's
// (no password file: localpg.MadeByRouter). Each is a usage error: nothing is
// deleted.
func checkDataDir(dir string) error {
	if strings.TrimSpace(dir) == "" {
		return usagef("--dir is empty: give the data directory to create, e.g. --dir .local/pg-test")
	}
	entries, err := os.ReadDir(dir)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return nil
	case err != nil:
		return usagef("--dir %s: %v; give a new or empty directory, or one an earlier localdb made", dir, err)
	case len(entries) == 0:
		return nil
	}
	if _, err := os.Stat(filepath.Join(dir, "PG_VERSION")); err != nil {
		return usagef("--dir %s is not empty and is not a PostgreSQL data directory: localdb deletes and recreates its data directory, "+
			"so it refuses this one (nothing was deleted); give a new or empty directory, e.g. --dir .local/pg-test", dir)
	}
	if pid, ok := runningServer(dir); ok {
		return usagef("--dir %s is the data directory of a PostgreSQL server that is running (pid %d; `make run`, or another localdb): "+
			"localdb deletes and recreates its data directory, so it refuses this one (nothing was deleted); "+
			"give another directory, or stop that server first (`kill %d`; if none runs there, the file %s is stale: remove it)",
			dir, pid, pid, filepath.Join(dir, "postmaster.pid"))
	}
	if localpg.KeptData(dir) {
		return usagef("--dir %s is the data directory whose data `make run` (or `router serve` with database_url: embedded) keeps between starts: "+
			"localdb deletes and recreates its data directory, so it refuses this one (nothing was deleted); "+
			"give another directory, e.g. --dir .local/pg-test, or, if its data is not wanted, delete it yourself first (rm -rf %s)", dir, dir)
	}
	if !localpg.MadeByRouter(dir) {
		return usagef("--dir %s is the data directory of a PostgreSQL cluster the router did not make (it has no router.password: "+
			"another PostgreSQL's, or one made by a router too old to tell): localdb deletes and recreates its data directory, "+
			"so it refuses this one (nothing was deleted); give another directory, e.g. --dir .local/pg-test, "+
			"or, if its data is not wanted, delete it yourself first (rm -rf %s)", dir, dir)
	}
	return nil
}

// runningServer reports the pid of the live postmaster whose postmaster.pid
// is in dataDir (localpg.RunningServer: a stale file whose pid another process
// now has does not count).
func runningServer(dataDir string) (int, bool) { return localpg.RunningServer(dataDir) }
