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
}

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
// An Operation that PostgreSQL cannot hold as text (a NUL, bytes that are not
// UTF-8) is no job's operation: the listing is empty, and nothing is sent.
func (s *Store) ListJobs(ctx context.Context, f ListFilter) ([]*Job, *ListPosition, error) {
	if !utf8.ValidString(f.Operation) || strings.IndexByte(f.Operation, 0) >= 0 {
		return []*Job{}, nil, nil
	}
	q, args, err := listQuery(f)
	if err != nil {
		return nil, nil, fmt.Errorf("list jobs: %w", err)
	}
	rows, err := s.pool.Query(ctx, q, args...)
	if err != nil {
		return nil, nil, fmt.Errorf("list jobs: %w", err)
	}
	jobs, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (*Job, error) { return scanJob(r) })
	if err != nil {
		return nil, nil, fmt.Errorf("list jobs: %w", err)
	}
	var next *ListPosition
	if len(jobs) > f.Limit {
		jobs = jobs[:f.Limit]
		last := jobs[len(jobs)-1]
		next = &ListPosition{CreatedAt: last.CreatedAt, ID: last.ID}
	}
	if len(jobs) > 0 {
		if err := s.attachChildren(ctx, jobs); err != nil {
			return nil, nil, fmt.Errorf("list jobs: %w", err)
		}
	}
	return jobs, next, nil
}

// listQuery builds the listing statement with only the conditions asked for,
// so the planner sees plain index conditions (no "$n IS NULL OR" branches).
// A position whose ID is not a UUID is an error.
func listQuery(f ListFilter) (string, []any, error) {
	f = f.Normalized()
	if f.After != nil {
		id, err := uuid.Parse(f.After.ID)
		if err != nil {
			return "", nil, fmt.Errorf("the position's id %q is not a UUID; continue from a position ListJobs returned", f.After.ID)
		}
		// PostgreSQL reads only some spellings of a UUID: hand it the canonical one.
		f.After = &ListPosition{CreatedAt: f.After.CreatedAt, ID: id.String()}
	}
	args := []any{f.Owner}
	where := []string{"j.owner = $1"}
	add := func(cond string, v ...any) {
		for _, x := range v {
			args = append(args, x)
			cond = strings.Replace(cond, "$?", "$"+strconv.Itoa(len(args)), 1)
		}
		where = append(where, cond)
	}
	if f.State != "" {
		add("j.state = $?", f.State)
	}
	if f.Operation != "" {
		add("j.operation = $?", f.Operation)
	}
	if !f.CreatedAfter.IsZero() {
		add("j.created_at > $?", f.CreatedAfter)
	}
	if !f.CreatedBefore.IsZero() {
		add("j.created_at < $?", f.CreatedBefore)
	}
	if f.After != nil {
		add("(j.created_at, j.id) < ($?, $?::uuid)", f.After.CreatedAt, f.After.ID)
	}
	args = append(args, f.Limit+1)
	return `SELECT ` + jobColumns + ` FROM jobs j WHERE ` + strings.Join(where, " AND ") +
		` ORDER BY j.created_at DESC, j.id DESC LIMIT $` + strconv.Itoa(len(args)), args, nil
}

// ExplainListJobs returns PostgreSQL's plan of the listing statement for f (for
// tests and docs: the plan must be a scan of jobs_owner_created_id).
func (s *Store) ExplainListJobs(ctx context.Context, f ListFilter) (string, error) {
	q, args, err := listQuery(f)
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
