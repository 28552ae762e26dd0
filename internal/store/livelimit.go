package store

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"
)

// ErrLiveLimit: a claim that would have created a job was refused because its
// owner already had max_live_jobs live jobs (pending, running, unknown) when
// its statement ran (NewJob.MaxLive); nothing was stored. The error is a
// *LiveLimitError.
var ErrLiveLimit = errors.New("the owner is at its limit of live jobs")

// LiveLimitError is ErrLiveLimit for one owner and its limit.
type LiveLimitError struct {
	Owner string
	Limit int
}

func (e *LiveLimitError) Error() string {
	return fmt.Sprintf("%v: owner %s already has %d pending, running or unknown jobs (limits.max_live_jobs is %d) in the database; "+
		"nothing was stored: retry once some have finished (or cancel or resolve them)", ErrLiveLimit, e.Owner, e.Limit, e.Limit)
}

// Is makes errors.Is(err, ErrLiveLimit) true.
func (e *LiveLimitError) Is(target error) bool { return target == ErrLiveLimit }

// ErrLiveLimitBusy: a claim with a limit (NewJob.MaxLive), or a retry of a
// limited owner's job (RetryJobKeyed), could not count its owner's live jobs:
// another transaction held the owner's max_live_jobs lock (liveLimitLockSQL)
// — a creation of the owner's on another replica slow to commit, a retry of
// one of its jobs — past the claim's (retry's) lock wait, and it wrote
// nothing. Its key's row (the job's) was not found held (no Idempotency-Key
// is to blame): the same request sent again shortly goes through. The error
// is a *BusyError (ErrBusy) naming the owner's check.
var ErrLiveLimitBusy = errors.New("the owner's max_live_jobs check is busy")

// liveLimitBusyError is the lock wait of a claim's max_live_jobs lock
// statement (batchedStmt.before), or a retry's (lockLiveLimitWaiting), that
// ran into lock_timeout (wait): claimOutcome (retryBusy) names the owner's
// check, not the key (the job), and claimAlone does not take the key for
// held (heldKeys).
type liveLimitBusyError struct {
	wait time.Duration
	err  error // lock_not_available
}

func (e *liveLimitBusyError) Error() string {
	return fmt.Sprintf("%v: the owner's lock was not released within %s: %v", ErrLiveLimitBusy, e.wait, e.err)
}
func (e *liveLimitBusyError) Unwrap() error        { return e.err }
func (e *liveLimitBusyError) Is(target error) bool { return target == ErrLiveLimitBusy }

// The database is the authority of max_live_jobs (SPEC §17), so that the
// limit holds across replicas: each replica's in-memory limiter (internal/api)
// only refuses early. A claim with a limit (NewJob.MaxLive > 0) counts its
// owner's live jobs in the claim statement itself (liveAdmitSQL), and the
// batch takes, in a statement of its own before the claim and in the same
// transaction, a transaction-scoped advisory lock per limited owner
// (liveLimitLockSQL). Under READ COMMITTED a statement's snapshot is taken at
// its start, so the claim, started once the lock is held, sees every job
// committed by the lock's previous holders: two batches of two replicas never
// both count the same free places. The locks are taken in the order of
// their keys, all before any row lock of the batch, so batches cannot
// deadlock on them. A batch with no limited claim sends no lock statement,
// and its claim statement never runs the count (the CASE's first branch): an
// unlimited owner's claim costs what it did.
//
// liveLimitLockSQL locks the owners in $1 (a namespaced key hashed to the
// advisory lock's bigint; two owners with one hash only share a lock). The
// key names the schema the router's tables are in: advisory locks are the
// database's, and two routers in two schemas of one database (or two tests)
// must not wait on each other's owner of the same name. Schema and owner
// names may both contain '/', so the schema's length comes first
// ('router.max_live_jobs/<length>/<schema>/<owner>'): joined by '/' alone,
// schema a with owner b/c and schema a/b with owner c had one key. Two
// (schema, owner) pairs have one key only if they are the same pair.
var liveLimitLockSQL = `SELECT pg_advisory_xact_lock(h) FROM (
    SELECT DISTINCT hashtextextended(` + liveLimitLockKey("o") + `, 0) AS h FROM unnest($1::text[]) o ORDER BY h) l`

// LiveLimitLockHashSQL is the advisory lock id (a bigint) of the
// max_live_jobs lock of owner $1, as a limited claim of that owner takes it:
// for a statement that holds the lock to stand in for a concurrent claim, or
// finds its waiters in pg_locks. Tests use it rather than writing the key out,
// which is the store's to change.
var LiveLimitLockHashSQL = `hashtextextended(` + liveLimitLockKey("$1::text") + `, 0)`

// liveLimitLockKey is the max_live_jobs lock's key of the owner expression
// owner (see liveLimitLockSQL), before it is hashed.
func liveLimitLockKey(owner string) string {
	return `'router.max_live_jobs/' || length(current_schema()) || '/' || current_schema() || '/' || ` + owner
}

// liveKeyHeldSQL is true when the input row's key (alias alias) holds a job,
// unexpired, in the statement's snapshot.
func liveKeyHeldSQL(alias string) string {
	return `EXISTS (SELECT 1 FROM idempotency_keys lk WHERE lk.owner = ` + alias + `.owner AND lk.operation = ` + alias +
		`.operation AND lk.idempotency_key = ` + alias + `.key AND (lk.expires_at IS NULL OR lk.expires_at > now()))`
}

// liveAdmitSQL is true when the claim's input row i may go on to create its
// job as far as max_live_jobs goes: it has no limit (the count is never run),
// or its key holds a job (a replay, a 409: never refused), or the owner's
// live jobs plus the batch's earlier claims of the owner that may create a
// job (in key order, the order of ord) are below the limit. Served by
// jobs_owner_live and the primary key of idempotency_keys.
var liveAdmitSQL = `CASE WHEN i.max_live <= 0 THEN true
        WHEN ` + liveKeyHeldSQL("i") + ` THEN true
        ELSE (SELECT count(*) FROM jobs lj WHERE lj.owner = i.owner AND lj.state IN ('pending', 'running', 'unknown'))
            + (SELECT count(*) FROM input p WHERE p.owner = i.owner AND p.ord < i.ord AND NOT p.replay_only
                AND NOT ` + liveKeyHeldSQL("p") + `) < i.max_live END`

// liveLimitLock is the lock statement for the limited owners of cs, or ""
// when none has a limit.
func liveLimitLock(cs []*claimRequest) (sql string, args []any) {
	var owners []string
	for _, c := range cs {
		if c.limitLocked() && !slices.Contains(owners, c.nj.Owner) {
			owners = append(owners, c.nj.Owner)
		}
	}
	if len(owners) == 0 {
		return "", nil
	}
	return liveLimitLockSQL, []any{owners}
}

// limitLocked reports whether the claim's statement takes its owner's
// max_live_jobs lock (liveLimitLock): a claim with a limit that may create a
// job.
func (c *claimRequest) limitLocked() bool { return c.nj.MaxLive > 0 && !c.nj.ReplayOnly }

// awaitKeyRowSQL locks the claim's key row, if there is one, as the claim
// statement's ON CONFLICT DO UPDATE does (FOR NO KEY UPDATE: idempotency_keys
// has no other unique key), so it waits for the holders the claim would wait
// for. A row another claim is inserting is not seen, and not waited for here:
// a claim of the same owner with a limit holds the owner's lock meanwhile,
// which the claim waits for next.
const awaitKeyRowSQL = `SELECT FROM idempotency_keys WHERE owner = $1 AND operation = $2 AND idempotency_key = $3
    FOR NO KEY UPDATE`

// awaitKeyRow waits up to wait until no other transaction holds nj's key row,
// in a transaction of its own that takes no max_live_jobs lock and writes
// nothing (its row lock ends with it): a claim run alone (claimAlone) waits
// here for a held row before it takes its owner's lock. One round trip, and
// only on that path: lock_not_available when the row is still held.
func (s *Store) awaitKeyRow(ctx context.Context, nj NewJob, wait time.Duration) error {
	conn, err := s.acquireBatchConn(ctx)
	if err != nil {
		return err
	}
	defer conn.Release()
	return awaitUnheld(ctx, conn, wait, awaitKeyRowSQL, nj.Owner, nj.Operation, nj.IdempotencyKey)
}

// awaitUnheld runs sql, a statement that locks rows and writes nothing, in
// an implicit transaction of its own with its lock waits bounded to wait:
// one round trip that returns once no other transaction holds those rows,
// or lock_not_available when one still does (awaitKeyRow, awaitRetryRows).
func awaitUnheld(ctx context.Context, db interface {
	SendBatch(context.Context, *pgx.Batch) pgx.BatchResults
}, wait time.Duration, sql string, args ...any) error {
	b := &pgx.Batch{}
	b.Queue(lockWaitSQL, lockWaitArg(wait))
	b.Queue(sql, args...)
	return db.SendBatch(ctx, b).Close()
}

// liveLimitBusy is err as the *BusyError naming owner's max_live_jobs check
// when it is a wait for that check's lock that ran out (liveLimitBusyError),
// nil otherwise: neither the key's row nor the job's is to blame.
func liveLimitBusy(err error, owner string) *BusyError {
	lb := (*liveLimitBusyError)(nil)
	if !errors.As(err, &lb) {
		return nil
	}
	return &BusyError{Wait: lb.wait, Err: err,
		What: fmt.Sprintf("the max_live_jobs check of owner %s (limits.max_live_jobs: the lock its live jobs are counted under)", owner)}
}
