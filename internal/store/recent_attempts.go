package store

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"
)

// RecentJob is a job as the operator dashboard reads it (RecentJobsCapped):
// Job.Attempts holds only its last attempts, and neither Job.RaceEvents, the
// job's costs (Job.CostUSD, Job.LostCostUSD) nor its Input, Params and Result
// are read.
type RecentJob struct {
	*Job
	// FirstAttemptAt is when the job's first attempt was created, shown or
	// not; nil when it has none.
	FirstAttemptAt *time.Time
}

// Earlier is how many of the job's attempts come before those read: a job's
// attempts are numbered 1, 2, … (CreateAttempt numbers each after the last,
// under the job's lock, and attempts are deleted only with their job), so
// they are the first read's seq less one.
func (j RecentJob) Earlier() int {
	if len(j.Attempts) == 0 {
		return 0
	}
	return j.Attempts[0].Seq - 1
}

// recentAttemptsSQL reads the last $2 attempts (by seq) of each job of $1,
// each with the creation of its job's first attempt, ordered by job and seq.
// Both are read from the (job_id, seq) index — the last ones backwards — so
// a job with thousands of retries costs $2 + 1 rows, in one statement for
// all the jobs.
const recentAttemptsSQL = `SELECT ` + attemptColumns + `, f.created_at
	FROM unnest($1::uuid[]) AS r(id)
	CROSS JOIN LATERAL (SELECT created_at FROM attempts WHERE job_id = r.id ORDER BY seq LIMIT 1) f
	CROSS JOIN LATERAL (SELECT * FROM attempts WHERE job_id = r.id ORDER BY seq DESC LIMIT $2) a
	ORDER BY a.job_id, a.seq`

// recentJobColumns are jobColumns without the job's input, params and
// result (read as NULL): each can be up to http.max_body_bytes, and the
// dashboard, which reads 20 jobs every few seconds, shows none of them.
const recentJobColumns = jobColumnsHead + `NULL::jsonb, NULL::jsonb, ` + jobColumnsMiddle + `NULL::jsonb, ` + jobColumnsTail

// RecentJobsCapped returns the limit most recently created jobs of every
// owner, newest first, each with at most its last perJob attempts (oldest
// first), for the operator dashboard: retries are not bounded in number, and
// a page that reloads every few seconds must not grow with them
// (RecentJob.Earlier counts the others). The tenant API and `router jobs`
// read every attempt (GetJob, ListJobs). perJob below 1 is taken as 1.
func (s *Store) RecentJobsCapped(ctx context.Context, limit, perJob int) ([]RecentJob, error) {
	rows, err := s.pool.Query(ctx, `SELECT `+recentJobColumns+` FROM jobs j ORDER BY j.created_at DESC, j.id LIMIT $1`, limit)
	if err != nil {
		return nil, err
	}
	jobs, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (*Job, error) { return scanJob(r) })
	if err != nil {
		return nil, err
	}
	out := make([]RecentJob, len(jobs))
	byID := make(map[string]*RecentJob, len(jobs))
	ids := make([]string, len(jobs))
	for i, j := range jobs {
		j.Attempts, j.RaceEvents = []Attempt{}, []RaceEvent{}
		out[i] = RecentJob{Job: j}
		byID[j.ID], ids[i] = &out[i], j.ID
	}
	if len(jobs) == 0 {
		return out, nil
	}
	rows, err = s.pool.Query(ctx, recentAttemptsSQL, ids, max(perJob, 1))
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var a Attempt
		var first time.Time
		if err := rows.Scan(append(a.dest(), &first)...); err != nil {
			return nil, err
		}
		rj := byID[a.JobID]
		rj.Attempts, rj.FirstAttemptAt = append(rj.Attempts, a), &first
	}
	return out, rows.Err()
}
