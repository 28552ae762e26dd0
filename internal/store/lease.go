package store

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/jackc/pgerrcode"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// RenewLeases extends, in one statement, the orchestration leases that owner
// holds on jobIDs and the leases of those jobs' in-flight attempts that owner
// holds, but for the attempts abandoned (their runs gave them up to their
// leases' expiry and recovery: renewing them would keep recovery from taking
// them over until the whole run ends), and returns what it renewed: each
// renewed attempt's lease now runs out no sooner than lease after the
// statement was sent. Job rows are locked before attempt rows (the attempts
// update reads j), the order every other statement takes. Lease columns are
// in no index, so these updates are HOT. Rows another transaction has locked
// (a win, a settlement: they release the lease themselves, or the next tick
// renews it) are skipped rather than waited for: a renewal holding some rows
// while it waits for others would stall the wins behind it. A skipped attempt
// is not among those returned, and its job is among Renewal.Missed.
//
// Its commit, as a lease's always was, does not wait for the WAL flush
// (lazyCommitSQL): a database that crashes may lose it, and an attempt
// returned here then has the lease it had before. RenewLeasesWaiting's
// statement is given, on the server, a statement and lock timeout a tenth
// under what is left of ctx (renewalTimeout): a renewal the caller gave up
// on, its connection dropped, would otherwise go on waiting for held rows
// (holding the rows it had locked) until they were released.
//
// It goes out on a connection of its own (Store.renew, see leaseConn), not on
// the pool the jobs use: a renewal that waited in the pool's queue while the
// replica's own work held every connection (a burst, statements waiting on
// held rows, dashboard renders) gave up at its deadline, and the leases of a
// live replica's calls in flight lapsed: the leader marked them `unknown`.
// The connection is kept while renewals come (closed once unused for lease),
// and an error names the wait that ran out: for the connection, for a dial,
// or for the statement's answer. After Close it is refused (ErrStoreClosed).
func (s *Store) RenewLeases(ctx context.Context, owner string, jobIDs, abandoned []string, lease time.Duration) (Renewal, error) {
	return s.renewLeases(ctx, owner, jobIDs, abandoned, lease, true)
}

// RenewLeasesWaiting is RenewLeases for jobs whose leases cannot wait for the
// next tick (a claim that answered late): it waits for rows another
// transaction holds, until ctx ends, rather than skipping them — a skipped
// row's lease would run out before the next tick renews it. Rows are locked
// in the same order as every other statement's (job rows, then attempt
// rows), so the wait cannot deadlock; the caller bounds it, keeping it short
// (the renewals of every other job wait behind it), and the server ends the
// wait itself just before ctx does.
func (s *Store) RenewLeasesWaiting(ctx context.Context, owner string, jobIDs, abandoned []string, lease time.Duration) (Renewal, error) {
	return s.renewLeases(ctx, owner, jobIDs, abandoned, lease, false)
}

// Renewal is what RenewLeases did.
type Renewal struct {
	// Attempts are the attempts whose leases it renewed.
	Attempts []RenewedAttempt
	// Missed are the jobs asked for with a row it did not renew though the
	// row was in flight and owner's as the statement began (the job's, or
	// an attempt's not abandoned): another transaction held it (skipped),
	// or changed it meanwhile. A job asked for and not listed had every
	// such row renewed.
	Missed []string
}

func (s *Store) renewLeases(ctx context.Context, owner string, jobIDs, abandoned []string, lease time.Duration, skipLocked bool) (Renewal, error) {
	if abandoned == nil {
		abandoned = []string{} // <> ALL(NULL) is never true
	}
	var out Renewal
	err := s.renew.run(ctx, lease, false, func(c *pgx.Conn) error {
		// A new batch each time: a sent one holds statement descriptions
		// of its connection, and a kept connection found dead is tried
		// once more on another. Its settings are computed as it goes out
		// (after a dial): what is left of ctx then.
		out = Renewal{}
		if err := sendRenewal(ctx, c, renewalBatch(ctx, owner, jobIDs, abandoned, lease, skipLocked), &out); err != nil {
			var pgErr *pgconn.PgError
			if errors.As(err, &pgErr) && (pgErr.Code == pgerrcode.LockNotAvailable || pgErr.Code == pgerrcode.QueryCanceled) {
				return fmt.Errorf("the renewal statement, ended by the database as the time it was given ran out "+
					"(a row another transaction held for that long, or a database too slow to answer in time): %w", err)
			}
			return fmt.Errorf("the renewal statement: %w", err)
		}
		return nil
	})
	if err != nil {
		return Renewal{}, fmt.Errorf("renew the leases of %d jobs: %w", len(jobIDs), err)
	}
	s.opt.Observer.Batch("renew", len(jobIDs))
	return out, nil
}

// renewalBatch is RenewLeases' transaction (skipLocked) or
// RenewLeasesWaiting's, the latter with the timeout renewalTimeout gives it
// for ctx.
func renewalBatch(ctx context.Context, owner string, jobIDs, abandoned []string, lease time.Duration, skipLocked bool) *pgx.Batch {
	sql := renewWaitingSQL
	if skipLocked {
		sql = renewSkippingSQL
	}
	b := &pgx.Batch{}
	b.Queue("BEGIN")
	// Only a waiting renewal is given a server-side timeout: a skipping one
	// waits for no held row, so it ends on its own once its caller gave up;
	// and on a loaded database the timeout would end renewals the server
	// would have committed a moment after the caller's deadline — a lease
	// kept — a short lease's three ticks in a row.
	if timeout, ok := renewalTimeout(ctx); ok && !skipLocked {
		b.Queue(lazyCommitWithTimeoutSQL, strconv.FormatInt(timeout.Milliseconds(), 10)+"ms")
	} else {
		b.Queue(lazyCommitSQL)
	}
	b.Queue(sql, jobIDs, owner, lease, abandoned)
	b.Queue("COMMIT")
	return b
}

// lazyCommitWithTimeoutSQL is lazyCommitSQL, and a statement and lock
// timeout ($1) for the rest of the transaction.
const lazyCommitWithTimeoutSQL = `SELECT set_config('synchronous_commit', 'off', true),
	set_config('statement_timeout', $1, true), set_config('lock_timeout', $1, true)`

// renewalTimeout is the server-side timeout of a renewal sent within ctx: a
// tenth under what is left of it (at least a millisecond; 0 would be none),
// so that the server ends a statement that would outlast it (waiting for a
// held row) just before the caller gives up on it. Without it, a caller's
// deadline only drops the connection: the server does not notice while the
// statement waits for a lock, and it goes on holding the rows it locked and
// waiting for the others, until they are released. ok is false when ctx has
// no deadline.
func renewalTimeout(ctx context.Context) (time.Duration, bool) {
	deadline, ok := ctx.Deadline()
	if !ok {
		return 0, false
	}
	left := time.Until(deadline)
	return max(left-left/10, time.Millisecond), true
}

// renewSQL is the renewal statement with lock as its row locks' clause. It
// returns the attempts renewed (job, attempt), then the jobs missed (job,
// NULL): those with a row in flight and owner's in the statement's snapshot
// (not an abandoned attempt's) that it did not renew. The reads of jobs and
// attempts in the last part see the rows as they were before the updates.
func renewSQL(lock string) string {
	return `WITH j AS (
			UPDATE jobs SET lease_expires_at = now() + $3::interval
			WHERE id IN (SELECT id FROM jobs WHERE id = ANY($1::uuid[]) AND lease_owner = $2
			             AND state IN ('pending', 'running') ` + lock + `)
			RETURNING id),
		a AS (
			UPDATE attempts SET lease_expires_at = now() + $3::interval
			WHERE id IN (SELECT id FROM attempts WHERE job_id = ANY($1::uuid[]) AND lease_owner = $2
			             AND state IN ('starting', 'running') AND id <> ALL($4::uuid[]) ` + lock + `)
			  AND (SELECT count(*) FROM j) >= 0
			RETURNING job_id, id)
		SELECT job_id::text, id::text FROM a
		UNION ALL
		SELECT DISTINCT m.job_id::text, NULL::text FROM (
			SELECT id AS job_id FROM jobs WHERE id = ANY($1::uuid[]) AND lease_owner = $2
			  AND state IN ('pending', 'running') AND id NOT IN (SELECT id FROM j)
			UNION ALL
			SELECT job_id FROM attempts WHERE job_id = ANY($1::uuid[]) AND lease_owner = $2
			  AND state IN ('starting', 'running') AND id <> ALL($4::uuid[]) AND id NOT IN (SELECT id FROM a)) m`
}

var (
	renewSkippingSQL = renewSQL("FOR UPDATE SKIP LOCKED")
	renewWaitingSQL  = renewSQL("FOR UPDATE")
)

// sendRenewal sends RenewLeases' batch b on c and records in out what it
// renewed. A failure may leave c inside the transaction: the lease
// connection closes it then (leaseConn.run), and the pool discards it.
func sendRenewal(ctx context.Context, c *pgx.Conn, b *pgx.Batch, out *Renewal) error {
	br := c.SendBatch(ctx, b)
	defer br.Close()
	for range 2 {
		if _, err := br.Exec(); err != nil {
			return err
		}
	}
	rows, err := br.Query()
	if err != nil {
		return err
	}
	for rows.Next() {
		var job string
		var attempt *string
		if err := rows.Scan(&job, &attempt); err != nil {
			rows.Close()
			return err
		}
		if attempt == nil {
			out.Missed = append(out.Missed, job)
		} else {
			out.Attempts = append(out.Attempts, RenewedAttempt{JobID: job, AttemptID: *attempt})
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	_, err = br.Exec() // COMMIT: what was renewed is known only once it is done
	return err
}

// RenewedAttempt is an attempt whose lease RenewLeases renewed.
type RenewedAttempt struct {
	JobID, AttemptID string
}

// UnknownAttempt identifies an unknown attempt for reconciliation.
type UnknownAttempt struct {
	JobID, AttemptID, Provider, Operation, PromptVersion string
	Seq                                                  int
	// Lookup: the attempt's request was sent with the metadata its
	// provider's lookup finds it by (attempts.lookup true), so a lookup
	// that finds no record of it proves the provider did no work. False
	// also for an attempt created before migration 0035 (NULL: not known).
	Lookup bool
}

// ListUnknownAttempts lists up to limit attempts on the given providers that
// have been unknown for at least minAge (database clock).
func (s *Store) ListUnknownAttempts(ctx context.Context, providers []string, minAge time.Duration, limit int) ([]UnknownAttempt, error) {
	return s.listUnknownAttempts(ctx, `a.provider = ANY($1)`, providers, minAge, limit)
}

// listUnknownAttempts lists up to limit attempts unknown for at least minAge
// (database clock), of jobs not ended, whose provider meets onProviders (a
// condition on a.provider and the array $1, providers), oldest first.
func (s *Store) listUnknownAttempts(ctx context.Context, onProviders string, providers []string, minAge time.Duration, limit int) ([]UnknownAttempt, error) {
	rows, err := s.pool.Query(ctx, `SELECT a.job_id::text, a.id::text, a.provider, j.operation, j.prompt_version, a.seq,
		       coalesce(a.lookup, false)
		FROM attempts a JOIN jobs j ON j.id = a.job_id
		WHERE a.state = 'unknown' AND `+onProviders+` AND j.state IN ('unknown', 'running')
		  AND a.finished_at <= now() - $3::interval
		ORDER BY a.finished_at LIMIT $2`, providers, limit, minAge)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []UnknownAttempt
	for rows.Next() {
		var u UnknownAttempt
		if err := rows.Scan(&u.JobID, &u.AttemptID, &u.Provider, &u.Operation, &u.PromptVersion, &u.Seq, &u.Lookup); err != nil {
			return nil, err
		}
		out = append(out, u)
	}
	return out, rows.Err()
}
