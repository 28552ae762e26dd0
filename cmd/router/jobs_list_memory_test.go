package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"text/tabwriter"

	"github.com/routerhq/router/internal/store"
	"github.com/routerhq/router/internal/testdb"
)

// bigPendingJobs inserts n pending jobs of acme, each with an input of mib
// MiB (stored compressed: it is one letter repeated).
func bigPendingJobs(t *testing.T, db *testdb.DB, n, mib int) {
	t.Helper()
	if _, err := db.Pool.Exec(context.Background(), `
		INSERT INTO jobs (id, owner, operation, idempotency_key, fingerprint, prompt_version, route, input, state)
		SELECT gen_random_uuid(), 'acme', 'triage', 'k' || i, '\x00', '1', 'default',
			jsonb_build_object('ticket', repeat('x', $2 * 1048576)), 'pending'
		FROM generate_series(1, $1::int) i`, n, mib); err != nil {
		t.Fatal(err)
	}
}

// `router jobs list` prints its seven-column table from what it prints of
// each job: before, it read every listed job whole (input, result, routing,
// attempts, race events): 40 jobs of 2 MiB inputs allocated over 120 MiB to print
// 4 KB (under 1 MiB now), and --limit 10000 of a backlog could need
// gigabytes. Found by review. The bound is a tenth of what the jobs' inputs
// alone come to: over ten times what the table allocates, and under a tenth
// of what reading the jobs whole did.
func TestJobsListTableDoesNotLoadInputs(t *testing.T) {
	db := testdb.New(t, store.Options{})
	cfg := writeConfig(t, db, "  - name: p\n    type: scripted")
	const jobs, mib = 40, 2
	bigPendingJobs(t, db, jobs, mib)
	var before, after runtime.MemStats
	var code int
	out, errOut := captureOutput(t, func() {
		runtime.GC()
		runtime.ReadMemStats(&before)
		code = run(context.Background(), []string{"jobs", "list", "--config", cfg, "--limit", "40"})
		runtime.ReadMemStats(&after)
	})
	if code != 0 || strings.Count(out, "\n") != jobs+1 {
		t.Fatalf("precondition: exit %d, stderr %q, output:\n%s", code, errOut, out)
	}
	alloc := after.TotalAlloc - before.TotalAlloc
	t.Logf("jobs list (table, %d bytes printed) allocated %d KiB", len(out), alloc>>10)
	if bound := uint64(jobs*mib<<20) / 10; alloc > bound {
		t.Errorf("jobs list (table, %d bytes printed) allocated %d MiB (bound %d MiB): it reads every job's input to print seven columns",
			len(out), alloc>>20, bound>>20)
	}
}

// `router jobs list --json` writes its array as it reads its jobs, a page
// at a time: what it holds is a page, not --limit jobs. Before, it read every
// listed job whole, then encoded the whole array, then wrote it (80 jobs of
// 1 MiB inputs: over 200 MiB live at once). The page is bounded to 1 byte,
// which makes it one job, and each job is larger than the pipe's buffer, so
// when the first byte comes out the command is still writing its first
// page; the reader then deletes every job. A command that reads page by
// page finds no more jobs after the first page; one that read them all
// before writing prints all 80. (A measure of the live heap at that point
// told them apart too, but other tests running beside it move it.)
func TestJobsListJSONHoldsOnePage(t *testing.T) {
	db := testdb.New(t, store.Options{})
	cfg := writeConfig(t, db, "  - name: p\n    type: scripted")
	const jobs, mib = 80, 1
	bigPendingJobs(t, db, jobs, mib)
	defer func(b int) { listPageBytes = b }(listPageBytes)
	listPageBytes = 1

	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	type read struct {
		out []byte
		err error
	}
	got := make(chan read, 1)
	go func() {
		first := make([]byte, 1)
		if _, err := io.ReadFull(r, first); err != nil {
			got <- read{err: err}
			return
		}
		// The command waits on the pipe inside its first page's first job.
		if _, err := db.Pool.Exec(context.Background(), `DELETE FROM jobs`); err != nil {
			got <- read{err: err}
			return
		}
		rest, err := io.ReadAll(r)
		got <- read{out: append(first, rest...), err: err}
	}()
	var code int
	errOut := withStdout(t, w, func() {
		code = run(context.Background(), []string{"jobs", "list", "--config", cfg, "--limit", "80", "--json"})
	})
	w.Close()
	res := <-got
	var listed []struct {
		ID string `json:"id"`
	}
	if res.err != nil || code != 0 || json.Unmarshal(res.out, &listed) != nil || len(listed) == 0 {
		t.Fatalf("precondition: exit %d, stderr %q, read error %v, %d bytes written, beginning %.200q", code, errOut, res.err, len(res.out), res.out)
	}
	if len(listed) != 1 {
		t.Errorf("jobs list --json printed %d jobs after the jobs were deleted while it wrote its first: it read every listed job before writing, not a page at a time", len(listed))
	}
}

// --json writes, page by page, the bytes it wrote for the whole list at once
// (printJSON of LiveJobs), and the table is what it was printed from the
// jobs read whole; the note that the list was cut is the same. Pages of 2
// jobs, so that lists of 1 to 6 jobs end inside a page, on its last job and
// one past it.
func TestJobsListOutputIsWhatItWas(t *testing.T) {
	db := testdb.New(t, store.Options{})
	cfg := writeConfig(t, db, "  - name: p\n    type: scripted")
	jobIn(t, db, "acme", "k1", store.JobUnknown, store.AttemptUnknown)
	jobIn(t, db, "globex", "k2", store.JobPending, store.AttemptFailed)
	jobIn(t, db, "acme", "k3", store.JobRunning, store.AttemptRunning)
	jobIn(t, db, "acme", "k4", store.JobFailed, store.AttemptFailed)
	jobIn(t, db, "globex", "k5", store.JobUnknown, store.AttemptUnknown)
	jobIn(t, db, "acme", "k6", store.JobUnknown, store.AttemptUnknown)
	// Two more in the same microsecond as k6: the order is then by id.
	jobIn(t, db, "acme", "k7", store.JobPending, store.AttemptFailed)
	jobIn(t, db, "globex", "k8", store.JobRunning, store.AttemptRunning)
	if _, err := db.Pool.Exec(context.Background(), `UPDATE jobs SET created_at = (SELECT created_at FROM jobs WHERE idempotency_key = 'k6')
		WHERE idempotency_key IN ('k7', 'k8')`); err != nil {
		t.Fatal(err)
	}
	defer func(n int) { listPageJobs = n }(listPageJobs)
	listPageJobs = 2

	ctx := context.Background()
	for _, f := range []struct{ state, owner string }{{"", ""}, {"unknown", ""}, {"", "acme"}, {"pending", "globex"}, {"", "nobody"}} {
		var states []string
		if f.state != "" {
			states = []string{f.state}
		}
		for limit := 1; limit <= 8; limit++ {
			whole, err := db.Store.LiveJobs(ctx, states, f.owner, limit+1)
			if err != nil {
				t.Fatal(err)
			}
			wantNote := ""
			if len(whole) > limit {
				whole = whole[:limit]
				wantNote = "only the"
			}
			if len(whole) == 0 {
				whole = []*store.Job{}
			}
			wantJSON, _ := captureOutput(t, func() {
				if err := printJSON(whole); err != nil {
					t.Error(err)
				}
			})
			wantTable := oldJobTable(whole)

			args := []string{"jobs", "list", "--config", cfg, "--limit", strconv.Itoa(limit)}
			if f.state != "" {
				args = append(args, "--state", f.state)
			}
			if f.owner != "" {
				args = append(args, "--owner", f.owner)
			}
			for _, asJSON := range []bool{false, true} {
				a, want := args, wantTable
				if asJSON {
					a, want = append(args[:len(args):len(args)], "--json"), wantJSON
				}
				var code int
				out, errOut := captureOutput(t, func() { code = run(ctx, a) })
				if code != 0 || out != want || strings.Contains(errOut, "only the") != (wantNote != "") {
					t.Errorf("%s: exit %d, stderr %q (cut: %v)\n got:\n%s\nwant:\n%s", strings.Join(a[4:], " "), code, errOut, wantNote != "", out, want)
				}
			}
		}
	}
	var jobs []store.Job
	out, _ := captureOutput(t, func() { run(ctx, []string{"jobs", "list", "--config", cfg, "--json"}) })
	if err := json.Unmarshal([]byte(out), &jobs); err != nil || len(jobs) != 7 {
		t.Fatalf("every live job, --json: %d jobs (%v), want 7", len(jobs), err)
	}
}

// oldJobTable is the table `router jobs list` printed from the jobs read
// whole, with their attempts (empty when there is none: the note is on stderr).
func oldJobTable(jobs []*store.Job) string {
	if len(jobs) == 0 {
		return ""
	}
	var b strings.Builder
	w := tabwriter.NewWriter(&b, 0, 4, 2, ' ', 0)
	fmt.Fprint(w, "ID\tOWNER\tOPERATION\tSTATE\tCREATED (UTC)\tATTEMPTS\tUNKNOWN ATTEMPTS\n")
	for _, j := range jobs {
		var unknown []string
		for _, a := range j.Attempts {
			if a.State == store.AttemptUnknown {
				unknown = append(unknown, a.Provider+" #"+strconv.Itoa(a.Seq))
			}
		}
		fmt.Fprint(w, j.ID+"\t"+j.Owner+"\t"+j.Operation+"\t"+j.State+"\t"+j.CreatedAt.UTC().Format("2006-01-02 15:04:05")+
			"\t"+strconv.Itoa(len(j.Attempts))+"\t"+strings.Join(unknown, ", ")+"\n")
	}
	w.Flush()
	return b.String()
}
