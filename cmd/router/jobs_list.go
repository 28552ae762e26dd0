package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/routerhq/router/internal/config"
	"github.com/routerhq/router/internal/store"
)

// maxListLimit bounds `router jobs list --limit`: the table's summaries are
// read in one statement (--json reads its jobs a page at a time).
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
	limit := intVar(fs, "limit", 100, "at most `N` jobs, the oldest first (1 to 10000)")
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
	// One that no owner can be (not UTF-8, say) is the command line's
	// fault, said as `keys create` says it, not PostgreSQL's encoding error.
	if given["owner"] {
		if err := config.ValidateOwner(*owner); err != nil {
			return usagef("--owner: %v", err)
		}
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
		var cut bool
		var err error
		if *asJSON {
			cut, err = streamLiveJobs(ctx, st, os.Stdout, states, *owner, *limit)
		} else {
			cut, err = printLiveJobTable(ctx, st, states, *owner, *limit, noJobMatches(*state, *owner))
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

// printLiveJobTable prints the table of the live jobs (printJobTable) from
// their summaries, which hold only what it prints: a job's input, result and
// routing (each up to http.max_body_bytes) are never read. It reports
// whether more jobs match than limit.
func printLiveJobTable(ctx context.Context, st *store.Store, states []string, owner string, limit int, none string) (cut bool, err error) {
	// One more than shown: whether it exists is whether the list was cut.
	jobs, err := st.LiveJobSummaries(ctx, states, owner, limit+1)
	if err != nil {
		return false, err
	}
	if cut = len(jobs) > limit; cut {
		jobs = jobs[:limit]
	}
	return cut, printJobTable(jobs, none)
}

// listPageJobs and listPageBytes bound a page of `router jobs list --json`:
// it reads the jobs a page at a time, whole, and writes each page before it
// reads the next, so that what it holds is one page, not --limit jobs (each
// with its input, up to http.max_body_bytes). A page ends at listPageJobs
// jobs, or earlier once their JSON comes to more than listPageBytes.
var (
	listPageJobs  = 100
	listPageBytes = 8 << 20
)

// streamLiveJobs writes to w, as one JSON array (the same bytes printJSON
// writes for the whole list), the live jobs LiveJobs lists with these
// arguments, at most limit, reading them a page at a time
// (store.LiveJobsPage). It reports whether more jobs match than limit. A
// read that fails after a page was written leaves the array unfinished:
// never a valid array that looks whole.
func streamLiveJobs(ctx context.Context, st *store.Store, w io.Writer, states []string, owner string, limit int) (cut bool, err error) {
	arr := &jsonArray{w: w}
	var after *store.LivePosition
	size := listPageJobs // jobs asked for a page: fewer once pages were cut by their bytes
	for shown := 0; ; {
		// One more than may still be shown: whether it exists is whether the list was cut.
		want := min(size, limit-shown+1)
		jobs, short, err := st.LiveJobsPage(ctx, states, owner, after, want, listPageBytes)
		if err != nil {
			return false, err
		}
		read := 0
		for _, j := range jobs {
			read += store.JobBytes(j) // as the store counts a page's bytes, attempts included
		}
		if shown+len(jobs) > limit {
			jobs, cut = jobs[:limit-shown], true
		}
		for _, j := range jobs {
			if err := arr.add(j); err != nil {
				return false, err
			}
		}
		shown += len(jobs)
		if cut || (!short && len(jobs) < want) {
			return cut, arr.close()
		}
		// The server sends a cut page's rows past the cut all the same: ask
		// for as many as fitted, and for more again once pages are small.
		if short {
			size = len(jobs)
		} else if read < listPageBytes/2 {
			size = min(listPageJobs, 2*size)
		}
		last := jobs[len(jobs)-1]
		after = &store.LivePosition{CreatedAt: last.CreatedAt, ID: last.ID}
	}
}

// jsonArray writes a JSON array one element at a time, in printJSON's form:
// the bytes json.Encoder (indented by two spaces) writes for the whole array.
type jsonArray struct {
	w   io.Writer
	n   int
	buf bytes.Buffer
}

// add writes v as the array's next element.
func (a *jsonArray) add(v any) error {
	a.buf.Reset()
	if a.n == 0 {
		a.buf.WriteString("[\n  ")
	} else {
		a.buf.WriteString(",\n  ")
	}
	enc := json.NewEncoder(&a.buf)
	enc.SetIndent("  ", "  ") // an element of the array: one level in
	if err := enc.Encode(v); err != nil {
		return err
	}
	a.buf.Truncate(a.buf.Len() - 1) // Encode's newline: the separator or the end follows
	a.n++
	if _, err := a.w.Write(a.buf.Bytes()); err != nil {
		return fmt.Errorf("print the jobs: %w", err)
	}
	return nil
}

// close ends the array ("[]" when it has no element).
func (a *jsonArray) close() error {
	end := "\n]\n"
	if a.n == 0 {
		end = "[]\n"
	}
	if _, err := io.WriteString(a.w, end); err != nil {
		return fmt.Errorf("print the jobs: %w", err)
	}
	return nil
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
func printJobTable(jobs []store.JobSummary, none string) error {
	if len(jobs) == 0 {
		fmt.Fprintln(os.Stderr, none)
		return nil
	}
	w := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "ID\tOWNER\tOPERATION\tSTATE\tCREATED (UTC)\tATTEMPTS\tUNKNOWN ATTEMPTS")
	for _, j := range jobs {
		var unknown []string
		for _, a := range j.Unknown {
			unknown = append(unknown, a.Provider+" #"+strconv.Itoa(a.Seq))
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%d\t%s\n", j.ID, j.Owner, j.Operation, j.State,
			j.CreatedAt.UTC().Format(time.DateTime), j.Attempts, strings.Join(unknown, ", "))
	}
	if err := w.Flush(); err != nil {
		return fmt.Errorf("print the jobs: %w", err)
	}
	return nil
}
