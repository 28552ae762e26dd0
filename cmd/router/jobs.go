package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/routerhq/router/internal/config"
	"github.com/routerhq/router/internal/race"
	"github.com/routerhq/router/internal/store"
)

const (
	jobsUsage     = "router jobs get ID | list [--state S] [--owner O] [--limit N] [--json] [--config router.yaml]"
	jobsGetUsage  = "router jobs get ID [--config router.yaml]"
	jobsListUsage = "router jobs list [--state pending|running|unknown] [--owner O] [--limit N] [--json] [--config router.yaml]"
)

func runJobs(ctx context.Context, args []string) error {
	switch {
	case len(args) == 0:
		fmt.Fprintln(os.Stderr, "router jobs: which subcommand? get or list\n\nUsage: "+jobsUsage)
		return errUsage
	case len(args) == 2 && isHelp(args[0]) && slices.Contains(subcommands["jobs"], args[1]):
		return runJobs(ctx, []string{args[1], "--help"}) // `router jobs help list`: list's, as `router help jobs list`
	case isHelp(args[0]):
		fmt.Fprintf(os.Stdout, "Usage: %s\n       %s\n\nRun `router jobs get --help` or `router jobs list --help` for their flags.\n", jobsGetUsage, jobsListUsage)
		return errHelpShown
	case args[0] == "get":
		return runJobsGet(ctx, args[1:])
	case args[0] == "list":
		return runJobsList(ctx, args[1:])
	}
	fmt.Fprintf(os.Stderr, "router jobs: unknown subcommand %q (get or list)\n\nUsage: %s\n", args[0], jobsUsage)
	return errUsage
}

func runJobsGet(ctx context.Context, args []string) error {
	fs := newFlags("jobs get", jobsGetUsage,
		"Prints a job (any owner's: this is an operator command) with its attempts and race events as JSON; a failed job's next_step says what its caller can do, as GET /v1/jobs/{id} does.")
	cfgPath := configFlag(fs)
	switch {
	case len(args) > 0 && isHelp(args[0]):
		return showHelp(fs)
	case len(args) == 0 || strings.HasPrefix(args[0], "-"):
		fmt.Fprintln(os.Stderr, "router jobs get: which job? Give its ID first (the X-Router-Job-Id header, or the id of POST /v1/jobs).\n\nUsage: "+jobsGetUsage)
		return errUsage
	}
	id := args[0]
	if err := parseNoArgs(fs, args[1:]); err != nil {
		return err
	}
	if !store.IsJobID(id) {
		// Another spelling of an id (uppercase, truncated, not a UUID) names
		// no job: said as "no job in this database", it sent the operator
		// looking at retention.
		return usagef("%q is not a job id: job ids are lowercase UUIDs with hyphens (8-4-4-4-12 hex digits), "+
			"as the router returns them (the X-Router-Job-Id header, or the id of POST /v1/jobs)", id)
	}
	return withStore(ctx, *cfgPath, func(cfg *config.Config, st *store.Store) error {
		job, err := st.GetJobAny(ctx, id)
		if errors.Is(err, store.ErrNotFound) {
			return fmt.Errorf("no job %s in this database (%s)", id, retentionNote(cfg))
		}
		if err != nil {
			return err
		}
		return printJob(job)
	})
}

// printJob prints job as printJSON would, indented, with a failed job's
// next_step (race.AppendJob: the job as GET /v1/jobs/{id} and its job.failed
// webhook event show it), so the operator reading it sees what its caller is
// told to do.
func printJob(job *store.Job) error {
	var out bytes.Buffer
	if err := json.Indent(&out, race.AppendJob(nil, job), "", "  "); err != nil {
		return fmt.Errorf("print job %s: %w", job.ID, err)
	}
	out.WriteByte('\n')
	_, err := out.WriteTo(os.Stdout)
	return err
}

func printJSON(v any) error {
	enc := json.NewEncoder(os.Stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// retentionNote says how long an ended job stays in the database, with this
// configuration's settings: a job not found may have been deleted by
// retention.
func retentionNote(cfg *config.Config) string {
	return fmt.Sprintf("an ended job is deleted idempotency.retention plus retention.jobs after it ended: %s + %s with this configuration",
		cfg.Idempotency.Retention.D(), cfg.Retention.Jobs.D())
}
