package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/routerhq/router/internal/config"
	"github.com/routerhq/router/internal/store"
)

const jobsUsage = "router jobs get ID [--config router.yaml]"

func runJobs(ctx context.Context, args []string) error {
	fs := newFlags("jobs get", jobsUsage,
		"Prints a job (any owner's: this is an operator command) with its attempts and race events as JSON.")
	cfgPath := configFlag(fs)
	switch {
	case len(args) > 0 && isHelp(args[0]), len(args) > 1 && args[0] == "get" && isHelp(args[1]):
		fs.Usage()
		return errHelpShown
	case len(args) == 0:
		fmt.Fprintln(os.Stderr, "router jobs: which subcommand? get\n\nUsage: "+jobsUsage)
		return errUsage
	case args[0] != "get":
		fmt.Fprintf(os.Stderr, "router jobs: unknown subcommand %q\n\nUsage: %s\n", args[0], jobsUsage)
		return errUsage
	case len(args) < 2 || strings.HasPrefix(args[1], "-"):
		fmt.Fprintln(os.Stderr, "router jobs get: which job? Give its ID first (the X-Router-Job-Id header, or the id of POST /v1/jobs).\n\nUsage: "+jobsUsage)
		return errUsage
	}
	id := args[1]
	if err := parseNoArgs(fs, args[2:]); err != nil {
		return err
	}
	return withStore(ctx, *cfgPath, func(_ *config.Config, st *store.Store) error {
		job, err := st.GetJobAny(ctx, id)
		if errors.Is(err, store.ErrNotFound) {
			return fmt.Errorf("no job %s in this database", id)
		}
		if err != nil {
			return err
		}
		enc := json.NewEncoder(os.Stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(job)
	})
}
