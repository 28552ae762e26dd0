package store

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// JobSummary is what `router jobs list` prints of a job: no input, params,
// result or routing, and of its attempts only how many there are and which
// are unknown. A job's JSON can be as large as http.max_body_bytes (up to
// 1 GiB); a summary is a few hundred bytes.
type JobSummary struct {
	ID        string
	Owner     string
	Operation string
	State     string
	CreatedAt time.Time
	// Attempts is how many attempts the job has.
	Attempts int
	// Unknown are its unknown attempts, in seq order: what a resolution names.
	Unknown []AttemptRef
}

// AttemptRef names one attempt of a job: its provider and seq.
type AttemptRef struct {
	Provider string
	Seq      int
}

// LiveJobSummaries returns the summaries of the jobs LiveJobs returns for the
// same arguments, in the same order (oldest first: created_at, then id), at
// most limit. It reads the same live jobs by the same conditions, but only
// the columns a summary holds, and counts the attempts of each in the
// database instead of reading them.
func (s *Store) LiveJobSummaries(ctx context.Context, states []string, owner string, limit int) ([]JobSummary, error) {
	if len(states) == 0 {
		states = LiveJobStates
	}
	rows, err := s.pool.Query(ctx, liveJobSummariesSQL, states, owner, limit)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []JobSummary{}
	for rows.Next() {
		var j JobSummary
		var providers []string
		var seqs []int
		if err := rows.Scan(&j.ID, &j.Owner, &j.Operation, &j.State, &j.CreatedAt, &j.Attempts, &providers, &seqs); err != nil {
			return nil, err
		}
		for i, p := range providers {
			j.Unknown = append(j.Unknown, AttemptRef{Provider: p, Seq: seqs[i]})
		}
		out = append(out, j)
	}
	return out, rows.Err()
}

// liveJobSummariesSQL is LiveJobs' statement (the same conditions, order and
// limit) reading a summary of each job. The jobs are chosen first, and only
// their attempts are then counted (a LATERAL join on the limited list), so
// no job beyond the limit has its attempts read.
const liveJobSummariesSQL = `SELECT j.id::text, j.owner, j.operation, j.state, j.created_at, a.n, a.providers, a.seqs
FROM (SELECT j.id, j.owner, j.operation, j.state, j.created_at FROM jobs j
      WHERE j.state IN ('pending', 'running', 'unknown') AND j.state = ANY($1::text[]) AND ($2 = '' OR j.owner = $2)
      ORDER BY j.created_at, j.id LIMIT $3) j
CROSS JOIN LATERAL (
    SELECT count(*) AS n,
        coalesce(array_agg(a.provider ORDER BY a.seq) FILTER (WHERE a.state = 'unknown'), '{}') AS providers,
        coalesce(array_agg(a.seq ORDER BY a.seq) FILTER (WHERE a.state = 'unknown'), '{}') AS seqs
    FROM attempts a WHERE a.job_id = j.id) a
ORDER BY j.created_at, j.id`

// LivePosition is a place in LiveJobs' order: the job's creation time and id.
type LivePosition struct {
	CreatedAt time.Time
	ID        string
}

// LiveJobsPage returns a page of LiveJobs' jobs (the same conditions and
// order), whole with their attempts and race events: those after position
// after (nil: from the oldest), at most limit. With maxBytes above 0 the page
// ends early, before limit jobs, once its jobs, counted whole with their
// attempts and race events (JobBytes), have come to more than maxBytes; cut
// says so (jobs may remain after it, or none). The attempts and race events
// of the jobs after the cut are not read. A page holds at least one job when
// any remains, whole however large. The job rows of the page past a cut are
// sent by the server all the same, and discarded: a caller that meets cut
// pages asks for fewer jobs next.
//
// Paging on from the position of each page's last job, while a page is cut or
// holds limit jobs, reads every job LiveJobs would, once each, in order,
// holding one page at a time. It is a keyset on LiveJobs' order (created_at,
// id), which never changes for a job: jobs created meanwhile come at the end,
// a job that ended meanwhile is no longer listed, and no page shifts another.
// A page is read as of one snapshot (readJobsInSnapshot): its jobs, their
// attempts and race events as they all were at one moment.
func (s *Store) LiveJobsPage(ctx context.Context, states []string, owner string, after *LivePosition, limit, maxBytes int) (jobs []*Job, cut bool, err error) {
	if len(states) == 0 {
		states = LiveJobStates
	}
	var afterAt *time.Time
	var afterID *string
	if after != nil {
		if !canonicalUUID(after.ID) {
			return nil, false, fmt.Errorf("the position's id %q is not a job id; continue from a job LiveJobsPage returned", after.ID)
		}
		afterAt, afterID = &after.CreatedAt, &after.ID
	}
	jobs, err = s.readJobsInSnapshot(ctx, `SELECT `+jobColumns+`, `+childBytesSQL+` FROM jobs j
		WHERE j.state IN ('pending', 'running', 'unknown') AND j.state = ANY($1::text[]) AND ($2 = '' OR j.owner = $2)
			AND ($4::timestamptz IS NULL OR (j.created_at, j.id) > ($4, $5::uuid))
		ORDER BY j.created_at, j.id LIMIT $3`, []any{states, owner, limit, afterAt, afterID},
		func(rows pgx.Rows) ([]*Job, error) {
			jobs := []*Job{}
			read := 0
			for rows.Next() {
				var children int64
				j, err := scanJob(rows, &children)
				if err != nil {
					return nil, err
				}
				jobs = append(jobs, j)
				read += jobOwnBytes(j) + int(children)
				if maxBytes > 0 && read > maxBytes && len(jobs) < limit {
					// The rest of the page is not read: rows.Close discards
					// it as it comes, a row at a time.
					cut = true
					return jobs, nil
				}
			}
			return jobs, rows.Err()
		})
	if err != nil {
		return nil, false, err
	}
	return jobs, cut, nil
}
