package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"

	"github.com/routerhq/router/internal/localpg"
)

// runLocalDB runs a command with DATABASE_URL pointing at a private local
// PostgreSQL, then stops it. `make test` uses it (SPEC §13).
func runLocalDB(ctx context.Context, args []string) error {
	fs := newFlags("localdb", "router localdb [--dir DIR] [--durable] -- COMMAND [ARGS...]",
		"Starts a private PostgreSQL from the machine's binaries (installing them when missing and run as root), "+
			"runs COMMAND with DATABASE_URL set, and stops the server. With DATABASE_URL already set, runs COMMAND as is.")
	dir := fs.String("dir", ".local/pg-test", "data directory (recreated)")
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
	if os.Getenv("DATABASE_URL") == "" {
		log := slog.New(slog.NewTextHandler(os.Stderr, nil))
		c, err := localpg.Start(ctx, localpg.Options{DataDir: *dir, Fresh: true, Durable: *durable, Logger: log})
		if err != nil {
			return err
		}
		defer c.Stop()
		os.Setenv("DATABASE_URL", c.URL)
	}
	cmd := exec.CommandContext(ctx, rest[0], rest[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	err := cmd.Run()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return fmt.Errorf("%s exited with status %d", rest[0], ee.ExitCode())
	}
	return err
}
