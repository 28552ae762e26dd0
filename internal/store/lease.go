package store

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// RenewLeases extends, in one statement, the orchestration leases that owner
// holds on jobIDs and the leases of those jobs' in-flight attempts that owner
// holds, and returns the attempts it renewed: each such attempt's lease now
// runs out no sooner than lease after the statement was sent. Job rows are
// locked before attempt rows (the attempts update reads j), the order every
// other statement takes. Lease columns are in no index, so these updates are
// HOT. Rows another transaction has locked (a win, a settlement: they release
// the lease themselves, or the next tick renews it) are skipped rather than
// waited for: a renewal holding some rows while it waits for others would
// stall the wins behind it. A skipped attempt is not among those returned.
//
// Its commit, as a lease's always was, does not wait for the WAL flush
// (lazyCommitSQL): a database that crashes may lose it, and an attempt
// returned here then has the lease it had before.
//
// It goes out on a connection of its own (Store.renew, see leaseConn), not on
// the pool the jobs use: a renewal that waited in the pool's queue while the
// replica's own work held every connection (a burst, statements waiting on
// held rows, dashboard renders) gave up at its deadline, and the leases of a
// live replica's calls in flight lapsed: the leader marked them `unknown`.
// The connection is kept while renewals come (closed once unused for lease),
// and an error names the wait that ran out: for the connection, for a dial,
// or for the statement's answer. After Close it is refused (ErrStoreClosed).
func (s *Store) RenewLeases(ctx context.Context, owner string, jobIDs []string, lease time.Duration) (renewed []RenewedAttempt, err error) {
	return s.renewLeases(ctx, owner, jobIDs, lease, true)
}

// RenewLeasesWaiting is RenewLeases for jobs whose leases cannot wait for the
// next tick (a claim that answered late): it waits for rows another
// transaction holds, until ctx ends, rather than skipping them — a skipped
// row's lease would run out before the next tick renews it. Rows are locked
// in the same order as every other statement's (job rows, then attempt
// rows), so the wait cannot deadlock; the caller bounds it, keeping it short
// (the renewals of every other job wait behind it).
func (s *Store) RenewLeasesWaiting(ctx context.Context, owner string, jobIDs []string, lease time.Duration) (renewed []RenewedAttempt, err error) {
	return s.renewLeases(ctx, owner, jobIDs, lease, false)
}

func (s *Store) renewLeases(ctx context.Context, owner string, jobIDs []string, lease time.Duration, skipLocked bool) (renewed []RenewedAttempt, err error) {
	err = s.renew.run(ctx, lease, false, func(c *pgx.Conn) error {
		// A new batch each time: a sent one holds statement descriptions
		// of its connection, and a kept connection found dead is tried
		// once more on another.
		renewed = nil
		if err := sendRenewal(ctx, c, renewalBatch(owner, jobIDs, lease, skipLocked), &renewed); err != nil {
			return fmt.Errorf("the renewal statement: %w", err)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("renew the leases of %d jobs: %w", len(jobIDs), err)
	}
	s.opt.Observer.Batch("renew", len(jobIDs))
	return renewed, nil
}

// renewalBatch is RenewLeases' transaction (skipLocked) or
// RenewLeasesWaiting's.
func renewalBatch(owner string, jobIDs []string, lease time.Duration, skipLocked bool) *pgx.Batch {
	sql := renewWaitingSQL
	if skipLocked {
		sql = renewSkippingSQL
	}
	b := &pgx.Batch{}
	b.Queue("BEGIN")
	b.Queue(lazyCommitSQL)
	b.Queue(sql, jobIDs, owner, lease)
	b.Queue("COMMIT")
	return b
}

// renewSQL is the renewal statement with lock as its row locks' clause.
func renewSQL(lock string) string {
	return `WITH j AS (
			UPDATE jobs SET lease_expires_at = now() + $3::interval
			WHERE id IN (SELECT id FROM jobs WHERE id = ANY($1::uuid[]) AND lease_owner = $2
			             AND state IN ('pending', 'running') ` + lock + `)
			RETURNING id)
		UPDATE attempts SET lease_expires_at = now() + $3::interval
		WHERE id IN (SELECT id FROM attempts WHERE job_id = ANY($1::uuid[]) AND lease_owner = $2
		             AND state IN ('starting', 'running') ` + lock + `)
		  AND (SELECT count(*) FROM j) >= 0
		RETURNING job_id::text, id::text`
}

var (
	renewSkippingSQL = renewSQL("FOR UPDATE SKIP LOCKED")
	renewWaitingSQL  = renewSQL("FOR UPDATE")
)

// sendRenewal sends RenewLeases' batch b on c and appends the attempts it
// renewed to renewed. A failure may leave c inside the transaction: the
// lease connection closes it then (leaseConn.run), and the pool discards it.
func sendRenewal(ctx context.Context, c *pgx.Conn, b *pgx.Batch, renewed *[]RenewedAttempt) error {
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
		var r RenewedAttempt
		if err := rows.Scan(&r.JobID, &r.AttemptID); err != nil {
			rows.Close()
			return err
		}
		*renewed = append(*renewed, r)
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
}

// ListUnknownAttempts lists up to limit attempts on the given providers that
// have been unknown for at least minAge (database clock).
func (s *Store) ListUnknownAttempts(ctx context.Context, providers []string, minAge time.Duration, limit int) ([]UnknownAttempt, error) {
	rows, err := s.pool.Query(ctx, `SELECT a.job_id::text, a.id::text, a.provider, j.operation, j.prompt_version, a.seq
		FROM attempts a JOIN jobs j ON j.id = a.job_id
		WHERE a.state = 'unknown' AND a.provider = ANY($1) AND j.state IN ('unknown', 'running')
		  AND a.finished_at <= now() - $3::interval
		ORDER BY a.finished_at LIMIT $2`, providers, limit, minAge)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []UnknownAttempt
	for rows.Next() {
		var u UnknownAttempt
		if err := rows.Scan(&u.JobID, &u.AttemptID, &u.Provider, &u.Operation, &u.PromptVersion, &u.Seq); err != nil {
			return nil, err
		}
		out = append(out, u)
	}
	return out, rows.Err()
}
