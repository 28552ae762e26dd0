package chaos

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// DB is what the checker needs of a database connection.
type DB interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

var _ DB = (*pgxpool.Pool)(nil)

// Rules the checker verifies; each Violation names one.
const (
	RuleDuplicateJob   = "one-job-per-key"       // SPEC §5.1, §5.4
	RuleKeyMismatch    = "key-points-at-its-job" // SPEC §5.1
	RuleDoubleWinner   = "at-most-one-winner"    // SPEC §6.5
	RuleWinnerMismatch = "completed-by-is-the-winner"
	RuleBlocking       = "no-attempt-while-sibling-blocked" // SPEC §3
	RuleAckMissing     = "acknowledged-job-exists"
	RuleStaleRunning   = "no-running-job-without-live-lease" // SPEC §6.8
	RuleStaleAttempt   = "no-inflight-attempt-with-expired-lease"
)

// Violation is one broken guarantee found in the history.
type Violation struct {
	Rule   string
	Detail string
}

func (v Violation) String() string { return v.Rule + ": " + v.Detail }

// Ack is a job id the router told a client about, for the key it was sent with.
type Ack struct {
	Owner string
	Key   string
	JobID string
}

// auditSQL records, from inside the database, every attempt inserted while a
// sibling attempt of its job was `starting` or `unknown`: the blocking rule of
// SPEC §3 judged independently of the code under test.
//
// The trigger first takes a transaction-scoped advisory lock on the job, so
// the attempt inserts of one job serialise until commit and each one's look
// for siblings (a new snapshot, after the lock) sees the others committed:
// without it, two transactions inserting `starting` attempts of one job at
// once (two replicas recovering it) each saw no sibling and the checker said
// nothing of the very race it exists to catch. The router locks the job row
// before it inserts an attempt, so this lock, always taken after that one,
// cannot deadlock with it.
const auditSQL = `
CREATE TABLE IF NOT EXISTS chaos_blocking_violations (
    attempt_id uuid, job_id uuid, sibling uuid, sibling_state text, at timestamptz DEFAULT now());
CREATE OR REPLACE FUNCTION chaos_audit_blocking() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE s record;
BEGIN
  PERFORM pg_advisory_xact_lock(hashtextextended(NEW.job_id::text, 0));
  SELECT id, state INTO s FROM attempts
   WHERE job_id = NEW.job_id AND id <> NEW.id AND state IN ('starting', 'unknown') LIMIT 1;
  IF FOUND THEN
    INSERT INTO chaos_blocking_violations (attempt_id, job_id, sibling, sibling_state)
    VALUES (NEW.id, NEW.job_id, s.id, s.state);
  END IF;
  RETURN NEW;
END $$;
DROP TRIGGER IF EXISTS chaos_audit_blocking ON attempts;
CREATE TRIGGER chaos_audit_blocking AFTER INSERT ON attempts
    FOR EACH ROW EXECUTE FUNCTION chaos_audit_blocking();`

// InstallAudit installs the blocking-rule audit trigger on the attempts table
// of db's search path. Install it after the migrations and before any load.
func InstallAudit(ctx context.Context, db DB) error {
	if _, err := db.Exec(ctx, auditSQL); err != nil {
		return fmt.Errorf("install the blocking audit trigger: %w", err)
	}
	return nil
}

// Unsettled counts jobs still `pending` or `running` and attempts still
// `starting` or `running`: zero once the system is quiet.
func Unsettled(ctx context.Context, db DB) (jobs, attempts int, err error) {
	err = db.QueryRow(ctx, `SELECT
	    (SELECT count(*) FROM jobs WHERE state IN ('pending', 'running')),
	    (SELECT count(*) FROM attempts WHERE state IN ('starting', 'running'))`).Scan(&jobs, &attempts)
	if err != nil {
		return 0, 0, fmt.Errorf("count unsettled jobs: %w", err)
	}
	return jobs, attempts, nil
}

// AwaitQuiet polls until no job is pending or running and no attempt is in
// flight, or until ctx ends; it returns the last counts seen. Transient
// database errors (a restart) are retried until ctx ends.
func AwaitQuiet(ctx context.Context, db DB, every time.Duration) (jobs, attempts int, err error) {
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		j, a, qerr := Unsettled(ctx, db)
		if qerr == nil {
			jobs, attempts, err = j, a, nil
			if j == 0 && a == 0 {
				return 0, 0, nil
			}
		} else {
			err = qerr
		}
		select {
		case <-ctx.Done():
			if err == nil {
				err = fmt.Errorf("not quiet: %d jobs pending or running, %d attempts in flight: %w", jobs, attempts, ctx.Err())
			}
			return jobs, attempts, err
		case <-tick.C:
		}
	}
}

// check is one rule: a query whose every row is a violation, rendered by its
// text columns.
type check struct {
	rule  string
	query string
}

var checks = []check{
	{RuleDuplicateJob, `
SELECT owner, operation, idempotency_key, count(*)::text || ' jobs: ' || string_agg(id::text, ', ')
  FROM jobs GROUP BY owner, operation, idempotency_key HAVING count(*) > 1`},
	{RuleKeyMismatch, `
SELECT k.owner, k.operation, k.idempotency_key, 'key row points at job ' || k.job_id ||
       coalesce(' of (' || j.owner || ', ' || j.operation || ', ' || j.idempotency_key || ')', ' which does not exist')
  FROM idempotency_keys k LEFT JOIN jobs j ON j.id = k.job_id
 WHERE j.id IS NULL OR (j.owner, j.operation, j.idempotency_key) <> (k.owner, k.operation, k.idempotency_key)`},
	{RuleDoubleWinner, `
SELECT job_id::text, count(*)::text || ' attempts won', string_agg(seq::text, ', '), ''
  FROM attempts WHERE state = 'won' GROUP BY job_id HAVING count(*) > 1`},
	{RuleWinnerMismatch, `
SELECT j.id::text, j.state, coalesce(j.completed_by::text, 'no completed_by'),
       coalesce('attempt ' || a.seq || ' is ' || a.state || CASE WHEN a.job_id <> j.id THEN ' of another job' ELSE '' END,
                'no such attempt')
  FROM jobs j LEFT JOIN attempts a ON a.id = j.completed_by
 WHERE (j.state = 'succeeded' OR j.completed_by IS NOT NULL)
   AND (j.state <> 'succeeded' OR a.id IS NULL OR a.job_id <> j.id OR a.state <> 'won')
UNION ALL
SELECT a.job_id::text, j.state, 'attempt ' || a.seq || ' won',
       'but completed_by is ' || coalesce(j.completed_by::text, 'empty')
  FROM attempts a JOIN jobs j ON j.id = a.job_id
 WHERE a.state = 'won' AND j.completed_by IS DISTINCT FROM a.id`},
	{RuleBlocking, `
SELECT v.job_id::text, 'attempt ' || coalesce(n.seq::text, v.attempt_id::text) || ' created',
       'while attempt ' || coalesce(s.seq::text, v.sibling::text) || ' was ' || v.sibling_state, v.at::text
  FROM chaos_blocking_violations v
  LEFT JOIN attempts n ON n.id = v.attempt_id LEFT JOIN attempts s ON s.id = v.sibling`},
	{RuleStaleRunning, `
SELECT j.id::text, j.state, 'job lease ' || coalesce(j.lease_owner || ' until ' || j.lease_expires_at::text, 'none'),
       'no attempt in flight with a live lease'
  FROM jobs j
 WHERE j.state IN ('pending', 'running')
   AND (j.lease_expires_at IS NULL OR j.lease_expires_at <= now())
   AND NOT EXISTS (SELECT 1 FROM attempts a WHERE a.job_id = j.id
                      AND a.state IN ('starting', 'running') AND a.lease_expires_at > now())`},
	{RuleStaleAttempt, `
SELECT a.job_id::text, 'attempt ' || a.seq || ' is ' || a.state,
       'lease ' || coalesce(a.lease_owner, '?') || ' expired at ' || coalesce(a.lease_expires_at::text, 'never set'), ''
  FROM attempts a
 WHERE a.state IN ('starting', 'running') AND (a.lease_expires_at IS NULL OR a.lease_expires_at <= now())`},
}

// Check reads the history and returns every violation it finds, acks being the
// job ids the router gave clients. Run it once the system is quiet (AwaitQuiet):
// the lease rules judge the moment they run.
func Check(ctx context.Context, db DB, acks []Ack) ([]Violation, error) {
	var out []Violation
	for _, c := range checks {
		rows, err := db.Query(ctx, c.query)
		if err != nil {
			return nil, fmt.Errorf("check %s: %w", c.rule, err)
		}
		for rows.Next() {
			var a, b, cc, d string
			if err := rows.Scan(&a, &b, &cc, &d); err != nil {
				rows.Close()
				return nil, fmt.Errorf("check %s: %w", c.rule, err)
			}
			out = append(out, Violation{Rule: c.rule, Detail: strings.TrimRight(strings.Join([]string{a, b, cc, d}, " "), " ")})
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, fmt.Errorf("check %s: %w", c.rule, err)
		}
	}
	missing, err := checkAcks(ctx, db, acks)
	if err != nil {
		return nil, err
	}
	return append(out, missing...), nil
}

// checkAcks verifies that every acknowledged job exists, for the owner and key
// it was acknowledged for.
func checkAcks(ctx context.Context, db DB, acks []Ack) ([]Violation, error) {
	ids := make([]string, 0, len(acks))
	for _, a := range acks {
		ids = append(ids, a.JobID)
	}
	slices.Sort(ids)
	ids = slices.Compact(ids)
	type row struct{ owner, key string }
	found := make(map[string]row, len(ids))
	const chunk = 5000
	for len(ids) > 0 {
		n := min(chunk, len(ids))
		rows, err := db.Query(ctx, `SELECT id::text, owner, idempotency_key FROM jobs WHERE id::text = ANY($1)`, ids[:n])
		if err != nil {
			return nil, fmt.Errorf("check %s: %w", RuleAckMissing, err)
		}
		for rows.Next() {
			var id string
			var r row
			if err := rows.Scan(&id, &r.owner, &r.key); err != nil {
				rows.Close()
				return nil, fmt.Errorf("check %s: %w", RuleAckMissing, err)
			}
			found[id] = r
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, fmt.Errorf("check %s: %w", RuleAckMissing, err)
		}
		ids = ids[n:]
	}
	var out []Violation
	for _, a := range acks {
		r, ok := found[a.JobID]
		switch {
		case !ok:
			out = append(out, Violation{RuleAckMissing, fmt.Sprintf("job %s acknowledged for key %q does not exist", a.JobID, a.Key)})
		case r.owner != a.Owner || r.key != a.Key:
			out = append(out, Violation{RuleAckMissing, fmt.Sprintf("job %s acknowledged for (%s, %q) is stored for (%s, %q)",
				a.JobID, a.Owner, a.Key, r.owner, r.key)})
		}
	}
	return out, nil
}
