package main

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/routerhq/router/internal/config"
	"github.com/routerhq/router/internal/store"
)

// maxListLimit bounds `router jobs list --limit`: each job is printed with
// its attempts, read in one statement.
const maxListLimit = 10000

func runJobsList(ctx context.Context, args []string) error {
	fs := newFlags("jobs list", jobsListUsage,
		"Lists the jobs of every owner that have not ended, oldest first: pending, running and unknown. "+
			"An unknown job waits for its unknown attempt to be resolved (POST /v1/jobs/{id}/attempts/{seq}/resolve "+
			"with the owner's key, or by reconciliation for providers that can look a request up); "+
			"`router jobs get ID` prints one in full.")
	cfgPath := configFlag(fs)
	state := fs.String("state", "", "only jobs in this state: pending, running or unknown (default: all three)")
	owner := fs.String("owner", "", "only this owner's jobs (default: every owner's)")
	limit := fs.Int("limit", 100, "at most this many jobs, the oldest first (1 to 10000)")
	asJSON := fs.Bool("json", false, "print the jobs, with their attempts, as a JSON array instead of a table")
	if err := parseNoArgs(fs, args); err != nil {
		return err
	}
	// A filter given but naming nothing (`--owner "$O"` with $O unset) is
	// refused rather than read as no filter, which would list every owner's
	// jobs (every state's) to an operator who asked for one.
	given := flagsGiven(fs)
	if given["owner"] && strings.TrimSpace(*owner) == "" {
		return usagef("--owner %q names no owner: give the owner (tenant) whose jobs to list, or leave --owner out to list every owner's", *owner)
	}
	if given["state"] && strings.TrimSpace(*state) == "" {
		return usagef("--state %q names no state: give pending, running or unknown, or leave --state out to list all three", *state)
	}
	if *state != "" && !slices.Contains(store.LiveJobStates, *state) {
		return usagef("--state %q is not a state of a job that has not ended; use pending, running or unknown (ended jobs: GET /v1/jobs?state=… with the owner's key)", *state)
	}
	if *limit < 1 || *limit > maxListLimit {
		return usagef("--limit %d is out of range; use 1 to %d", *limit, maxListLimit)
	}
	var states []string
	if *state != "" {
		states = []string{*state}
	}
	return withStore(ctx, *cfgPath, func(_ *config.Config, st *store.Store) error {
		// One more than shown: whether it exists is whether the list was cut.
		jobs, err := st.LiveJobs(ctx, states, *owner, *limit+1)
		if err != nil {
			return err
		}
		cut := len(jobs) > *limit
		if cut {
			jobs = jobs[:*limit]
		}
		if *asJSON {
			if jobs == nil {
				jobs = []*store.Job{}
			}
			err = printJSON(jobs)
		} else {
			err = printJobTable(jobs, noJobMatches(*state, *owner))
		}
		if err == nil && cut {
			// On stderr, so that --json's stdout stays one JSON array.
			more := fmt.Sprintf("raise --limit (up to %d) or narrow", maxListLimit)
			if *limit >= maxListLimit {
				more = "narrow the list" // --limit is at its most
			}
			fmt.Fprintf(os.Stderr, "only the %d oldest shown: more have not ended; %s with --state or --owner to see them\n", *limit, more)
		}
		return err
	})
}

// noJobMatches is what `router jobs list` says when it lists nothing: which
// jobs it looked for (only ones that have not ended; an operator who knows
// of ended ones would otherwise read "no job" as none at all) and where the
// ended ones are.
func noJobMatches(state, owner string) string {
	states := "pending, running and unknown"
	if state != "" {
		states = state
	}
	of := ""
	if owner != "" {
		of = fmt.Sprintf(" of owner %q", owner)
	}
	return "no job" + of + " matches among the " + states + " ones (this lists only jobs that have not ended; " +
		"ended jobs: GET /v1/jobs with the owner's key, ?state=failed for instance, or `router jobs get ID`)"
}

// printJobTable prints one line per job; an unknown job names its unknown
// attempts (provider and seq), which are what a resolution names. Its error
// is stdout's (a full disk, a closed pipe): a table that was not written
// fails the command, as --json does, rather than exiting 0 with a cut list.
// none is what it says when there is no job.
func printJobTable(jobs []*store.Job, none string) error {
	if len(jobs) == 0 {
		fmt.Fprintln(os.Stderr, none)
		return nil
	}
	w := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "ID\tOWNER\tOPERATION\tSTATE\tCREATED (UTC)\tATTEMPTS\tUNKNOWN ATTEMPTS")
	for _, j := range jobs {
		var unknown []string
		for _, a := range j.Attempts {
			if a.State == store.AttemptUnknown {
				unknown = append(unknown, a.Provider+" #"+strconv.Itoa(a.Seq))
			}
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%d\t%s\n", j.ID, j.Owner, j.Operation, j.State,
			j.CreatedAt.UTC().Format(time.DateTime), len(j.Attempts), strings.Join(unknown, ", "))
	}
	if err := w.Flush(); err != nil {
		return fmt.Errorf("print the jobs: %w", err)
	}
	return nil
}
