package store

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
)

// ListFilter selects an owner's jobs for GET /v1/jobs.
type ListFilter struct {
	Owner         string
	State         string    // empty: any
	Operation     string    // empty: any
	CreatedAfter  time.Time // zero: no bound (exclusive); see Normalized
	CreatedBefore time.Time // zero: no bound (exclusive); see Normalized
	Limit         int
	// After continues a listing: only jobs older than this position in the
	// newest-first order (created_at DESC, id DESC). Its ID may be any
	// spelling of a UUID that github.com/google/uuid parses (urn:uuid:…,
	// {…}, no hyphens, any case); anything else is an error, returned
	// before any statement is sent.
	After *ListPosition
	// Scan is how many of the owner's jobs a page filtered by Operation or
	// by a State that is not live examines at most (see ListJobs); 0 means
	// DefaultListScan.
	Scan int
	// MaxBytes, when above 0, bounds what a page reads of its jobs' JSON,
	// counted as JobBytes counts it: each job whole, with its attempts and
	// race events. Once the jobs read come to more than MaxBytes, the page
	// ends after the last of them, with its position to continue from (a
	// page of large jobs, or of jobs with many attempts, is short); the
	// attempts and race events of the jobs after it are not read. Every page
	// holds at least one job, whole however large. A job carries its whole
	// input, and its attempts have no bound on their number, so Limit jobs
	// alone could be hundreds of MiB held at once.
	MaxBytes int
}

// DefaultListScan is how many of an owner's jobs one page of a listing
// filtered by state or operation examines at most. Those filters are not
// conditions of the index the listing walks (jobs_owner_created_id), and an
// index for them would cost every job's writes: unbounded, a page of a filter
// that matched rarely or never read the owner's whole history (1.3 s for
// state=failed of an owner with 450,000 jobs and no failure), and any tenant
// could make the shared database do so with one request. A thousand rows is a
// few milliseconds; a filter matching one job in twenty still fills a page of
// 50.
const DefaultListScan = 1000

// Normalized returns f with its time bounds in UTC at PostgreSQL's precision,
// as ListJobs applies them. A job's created_at is a whole microsecond, so an
// exclusive bound between two microseconds is moved to the one that selects
// the same jobs: CreatedAfter down (a job at 10µs is not after 10.5µs, nor
// after 10µs) and CreatedBefore up (a job at 10µs is before 10.5µs, and before
// 11µs). Leaving the rounding to the driver would truncate both, and a job
// created in the microsecond a CreatedBefore falls in would be left out.
// Two filters with the same Normalized form select the same jobs.
func (f ListFilter) Normalized() ListFilter {
	if !f.CreatedAfter.IsZero() {
		f.CreatedAfter = f.CreatedAfter.UTC().Truncate(time.Microsecond)
	}
	if !f.CreatedBefore.IsZero() {
		t := f.CreatedBefore.UTC()
		if c := t.Truncate(time.Microsecond); c.Equal(t) {
			f.CreatedBefore = c
		} else {
			f.CreatedBefore = c.Add(time.Microsecond)
		}
	}
	return f
}

// ListPosition is a place in the newest-first order of an owner's jobs.
type ListPosition struct {
	CreatedAt time.Time
	ID        string
}

// ListJobs returns owner's jobs newest first, at most Limit, with a position to
// continue from when there may be more (nil: the end). It is a keyset scan of
// the index jobs_owner_created_id (owner, created_at DESC, id DESC): a page
// costs the same however deep it is, and jobs created after the first page
// never shift the later ones.
//
// A page filtered by Operation, or by a State that is not live (succeeded,
// failed, cancelled), examines at most Scan of the owner's jobs in that order
// (those within the CreatedAfter and CreatedBefore bounds, after the
// position) and returns the matches among them: when fewer than Limit match
// there and jobs remain after them, the page is short, possibly empty, and its
// position is that of the last job examined. Paging on until the position is
// nil returns every matching job exactly once, in order, each page at bounded
// cost. A live state (pending, running, unknown) is read as before, whatever
// the operation: the planner reaches those jobs through the partial indexes
// of live jobs (jobs_owner_live, jobs_open_created), never through the
// owner's history.
//
// A page is read as of one snapshot (readJobsInSnapshot): its jobs, their
// attempts and race events as they all were at one moment. Its byte bound
// (MaxBytes) counts the attempts and race events of its jobs in the listing
// statement itself, so those of the jobs after the bound are never read.
//
// An Operation that PostgreSQL cannot hold as text (a NUL, bytes that are not
// UTF-8) is no job's operation: the listing is empty, and nothing is sent.
func (s *Store) ListJobs(ctx context.Context, f ListFilter) ([]*Job, *ListPosition, error) {
	if !utf8.ValidString(f.Operation) || strings.IndexByte(f.Operation, 0) >= 0 {
		return []*Job{}, nil, nil
	}
	q, args, windowed, err := listQuery(f)
	if err != nil {
		return nil, nil, fmt.Errorf("list jobs: %w", err)
	}
	var next *ListPosition
	jobs, err := s.readJobsInSnapshot(ctx, q, args, func(rows pgx.Rows) ([]*Job, error) {
		jobs, edge, cut, err := readListing(rows, windowed, f.MaxBytes)
		if err != nil {
			return nil, err
		}
		next = edge // set when the window ended, with jobs after it, before Limit+1 matched
		if cut && len(jobs) <= f.Limit {
			last := jobs[len(jobs)-1]
			next = &ListPosition{CreatedAt: last.CreatedAt, ID: last.ID}
		} else if len(jobs) > f.Limit {
			jobs = jobs[:f.Limit]
			last := jobs[len(jobs)-1]
			next = &ListPosition{CreatedAt: last.CreatedAt, ID: last.ID}
		}
		return jobs, nil
	})
	if err != nil {
		return nil, nil, fmt.Errorf("list jobs: %w", err)
	}
	return jobs, next, nil
}

// readListing reads the rows of a listing statement (listQuery) and returns
// their jobs, with, for a scan-bounded one (windowed), the position of the
// last job it examined when jobs remain after its window (nil otherwise).
// With maxBytes above 0 it stops reading once its jobs have come to more than
// maxBytes (JobBytes, the attempts and race events counted from the row's
// childBytesSQL) and a row follows (cut): the page ends at its last job, and
// edge is nil.
func readListing(rows pgx.Rows, windowed bool, maxBytes int) ([]*Job, *ListPosition, bool, error) {
	jobs := []*Job{}
	var pos ListPosition
	var children int64
	var last, beyond, remain bool
	var edge *ListPosition
	extra := []any{&children}
	if windowed {
		extra = append(extra, &pos.CreatedAt, &pos.ID, &last, &beyond)
	}
	read := 0
	for rows.Next() {
		if maxBytes > 0 && read > maxBytes {
			return jobs, nil, true, nil // rows.Close discards the rest as it comes
		}
		var j *Job
		var err error
		switch {
		case !windowed:
			if j, err = scanJob(rows, extra...); err != nil {
				return nil, nil, false, err
			}
		case rows.RawValues()[0] == nil: // not a match: the window's last job, or the one after it
			if err := rows.Scan(append(make([]any, jobColumnCount), extra...)...); err != nil {
				return nil, nil, false, err
			}
		default:
			if j, err = scanJob(rows, extra...); err != nil {
				return nil, nil, false, err
			}
		}
		if j != nil {
			jobs = append(jobs, j)
			read += jobOwnBytes(j) + int(children)
		}
		if windowed {
			if last {
				edge = &ListPosition{CreatedAt: pos.CreatedAt, ID: pos.ID}
			}
			remain = remain || beyond
		}
	}
	if err := rows.Err(); err != nil {
		return nil, nil, false, err
	}
	if !remain {
		edge = nil
	}
	return jobs, edge, false, nil
}

// JobBytes is what a page's byte bound (ListFilter.MaxBytes, LiveJobsPage)
// counts for j, read whole with its attempts and race events: the lengths of
// its JSON members and strings, and of each attempt's and race event's, plus
// an allowance for member names, ids, times and numbers (jobJSONAllowance,
// attemptJSONAllowance, raceEventJSONAllowance). It is at least the length
// of j's JSON (Job.AppendJSON) unless its strings hold characters that JSON
// escapes. The store counts a job's attempts and race events in the database
// (childBytesSQL) before it reads them; this is the same count from the job
// as read.
func JobBytes(j *Job) int {
	n := jobOwnBytes(j)
	for i := range j.Attempts {
		a := &j.Attempts[i]
		n += attemptJSONAllowance + len(a.Provider) + len(a.Model) + len(a.Usage) + len(a.Error) + len(a.ValidationErrors)
		if a.ResponseModel != nil {
			n += len(*a.ResponseModel)
		}
		if a.ProviderResponseID != nil {
			n += len(*a.ProviderResponseID)
		}
	}
	for i := range j.RaceEvents {
		e := &j.RaceEvents[i]
		n += raceEventJSONAllowance + len(e.Kind) + len(e.Usage)
		if e.Provider != nil {
			n += len(*e.Provider)
		}
		if e.Detail != nil {
			n += len(*e.Detail)
		}
	}
	return n
}

// jobOwnBytes is JobBytes of j without its attempts and race events.
func jobOwnBytes(j *Job) int {
	n := jobJSONAllowance + len(j.Input) + len(j.Params) + len(j.Result) + len(j.Routing) +
		len(j.Owner) + len(j.Operation) + len(j.IdempotencyKey) + len(j.PromptVersion) + len(j.Route)
	if j.Error != nil {
		n += len(*j.Error)
	}
	return n
}

// The allowances JobBytes adds for what it does not count byte by byte: a
// job's JSON without its members of variable length is about 560 bytes, an
// attempt's about 470 at most, a race event's about 210.
const (
	jobJSONAllowance       = 640
	attemptJSONAllowance   = 512
	raceEventJSONAllowance = 256
)

// childBytesSQL is the column of a listing row (the job's table alias j) that
// counts what JobBytes counts of the job's attempts and race events, in the
// database: a page's byte bound is then reached before their rows are read,
// and the attempts of the jobs after it are never sent. A JSON column counts
// as its text (what the router reads of it); NULL as nothing. The job's
// attempts and race events are read by their indexes on job_id.
var childBytesSQL = `(SELECT coalesce(sum(` + strconv.Itoa(attemptJSONAllowance) + ` + octet_length(a.provider) + octet_length(a.model)
		+ coalesce(octet_length(a.usage::text), 0) + coalesce(octet_length(a.error::text), 0)
		+ coalesce(octet_length(a.validation_errors::text), 0) + coalesce(octet_length(a.response_model), 0)
		+ coalesce(octet_length(a.provider_response_id), 0)), 0)
	FROM attempts a WHERE a.job_id = j.id)
	+ (SELECT coalesce(sum(` + strconv.Itoa(raceEventJSONAllowance) + ` + octet_length(r.kind) + coalesce(octet_length(r.provider), 0)
		+ coalesce(octet_length(r.usage::text), 0) + coalesce(octet_length(r.detail), 0)), 0)
	FROM race_events r WHERE r.job_id = j.id)`

// jobColumnCount is how many columns jobColumns is.
var jobColumnCount = len((&Job{}).dest())

// listQuery builds the listing statement with only the conditions asked for,
// so the planner sees plain index conditions (no "$n IS NULL OR" branches).
// A position whose ID is not a UUID is an error.
//
// A filter by operation or by a state that is not live makes the scan-bounded
// statement (windowQuery, windowed); the rest, the plain keyset scan.
func listQuery(f ListFilter) (q string, args []any, windowed bool, err error) {
	f = f.Normalized()
	if f.After != nil {
		id, err := uuid.Parse(f.After.ID)
		if err != nil {
			return "", nil, false, fmt.Errorf("the position's id %q is not a UUID; continue from a position ListJobs returned", f.After.ID)
		}
		// PostgreSQL reads only some spellings of a UUID: hand it the canonical one.
		f.After = &ListPosition{CreatedAt: f.After.CreatedAt, ID: id.String()}
	}
	var c listConds
	// In the index's order: the index conditions of the scan.
	c.add(&c.scan, "j.owner = $?", f.Owner)
	if !f.CreatedAfter.IsZero() {
		c.add(&c.scan, "j.created_at > $?", f.CreatedAfter)
	}
	if !f.CreatedBefore.IsZero() {
		c.add(&c.scan, "j.created_at < $?", f.CreatedBefore)
	}
	if f.After != nil {
		c.add(&c.scan, "(j.created_at, j.id) < ($?, $?::uuid)", f.After.CreatedAt, f.After.ID)
	}
	// Not in the index: filters of the rows it reads.
	if f.State != "" {
		c.add(&c.match, "j.state = $?", f.State)
	}
	if f.Operation != "" {
		c.add(&c.match, "j.operation = $?", f.Operation)
	}
	if len(c.match) == 0 || liveState(f.State) {
		where := strings.Join(append(c.scan, c.match...), " AND ")
		return `SELECT ` + jobColumns + `, ` + childBytesSQL + ` FROM jobs j WHERE ` + where +
			` ORDER BY j.created_at DESC, j.id DESC LIMIT ` + c.arg(f.Limit+1), c.args, false, nil
	}
	scan := f.Scan
	if scan <= 0 {
		scan = DefaultListScan
	}
	return windowQuery(&c, scan, f.Limit), c.args, true, nil
}

// liveState reports whether state is one of the states of the partial index
// jobs_owner_live, whose listings the planner reads from the live jobs.
func liveState(state string) bool {
	return state == JobPending || state == JobRunning || state == JobUnknown
}

// windowQuery is the scan-bounded listing statement. Its window w is the
// owner's next scan+1 jobs in keyset order, numbered (n), each with whether
// it matches the filters (hit); the last one is read only to tell whether
// jobs remain after the scan, and is never a match. The statement returns the
// window's matches and its last two jobs, in order, at most limit+2 rows: the
// first limit+1 matches when there are that many (the page is full), or else
// every match and the window's edge. Each row ends with the job's position
// and whether it is the last examined and the one after it; the job's own
// columns are NULL but for a match. Everything streams in keyset order (the
// window function keeps it): the scan stops as soon as the rows are found,
// so a filter that matches often reads little more than a page, and one that
// does not reads at most the window. A match is read whole by primary key;
// another job's key is NULL, which an index lookup answers without reading.
func windowQuery(c *listConds, scan, limit int) string {
	n := c.arg(scan + 1)
	return `SELECT ` + jobColumns + `, ` + childBytesSQL + `, w.created_at, w.id::text, w.n = ` + n + ` - 1, w.n = ` + n + `
FROM (
    SELECT s.id, s.created_at, s.hit, row_number() OVER (ORDER BY s.created_at DESC, s.id DESC) AS n
    FROM (SELECT j.id, j.created_at, (` + strings.Join(c.match, " AND ") + `) AS hit FROM jobs j
          WHERE ` + strings.Join(c.scan, " AND ") + `
          ORDER BY j.created_at DESC, j.id DESC LIMIT ` + n + `) s
) w
LEFT JOIN jobs j ON j.id = CASE WHEN w.hit AND w.n < ` + n + ` THEN w.id END
WHERE (w.hit AND w.n < ` + n + `) OR w.n >= ` + n + ` - 1
ORDER BY w.created_at DESC, w.id DESC
LIMIT ` + c.arg(limit+2)
}

// listConds are a listing statement's conditions and their arguments: scan
// those of the index the listing walks, match the filters of what it reads.
type listConds struct {
	args        []any
	scan, match []string
}

// arg adds an argument and returns its placeholder.
func (c *listConds) arg(v any) string {
	c.args = append(c.args, v)
	return "$" + strconv.Itoa(len(c.args))
}

// add appends cond to *to, each "$?" in it standing for the next of v.
func (c *listConds) add(to *[]string, cond string, v ...any) {
	for _, x := range v {
		cond = strings.Replace(cond, "$?", c.arg(x), 1)
	}
	*to = append(*to, cond)
}

// ExplainListJobs returns PostgreSQL's plan of the listing statement for f (for
// tests and docs: the plan must be a scan of jobs_owner_created_id).
func (s *Store) ExplainListJobs(ctx context.Context, f ListFilter) (string, error) {
	q, args, _, err := listQuery(f)
	if err != nil {
		return "", err
	}
	rows, err := s.pool.Query(ctx, "EXPLAIN "+q, args...)
	if err != nil {
		return "", err
	}
	lines, err := pgx.CollectRows(rows, pgx.RowTo[string])
	return strings.Join(lines, "\n"), err
}
