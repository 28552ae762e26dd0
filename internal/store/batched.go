package store

import (
	"context"
	"strings"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// batchSettingsSQL makes the rest of its transaction plan with index lookups
// and nested loops only (the settings end with the transaction).
//
// The batched statements (claim, win) touch a handful of rows each, reached
// by primary keys and unique keys. Left to its statistics, PostgreSQL can
// choose otherwise when they are stale — a table that grew fast since its
// last ANALYZE looks tiny, and a seq scan plus hash join looks cheaper — or
// when a partial index (attempts_inflight, jobs_open_created) is full of entries of
// rows that left it and VACUUM has not yet removed: `make bench` measured a
// win's statement at 0.5 ms on an analyzed database and 8 ms a minute of
// load later, scanning 38,000 rows each time. With these settings the
// plan's cost no longer depends on how big the tables are.
//
// JIT compilation is off as well: a disabled node that has no alternative
// still costs its plan 10^10, far above jit_above_cost, and compiling such a
// plan takes milliseconds.
//
// And the plan is made once per connection (plan_cache_mode =
// force_generic_plan): with index-only plans a custom plan for the batch's
// actual arrays cannot be better than the generic one, but PostgreSQL's own
// choice between them depends on the batch sizes it has seen, and with
// batches of one (a lone caller) it kept planning the claim afresh each time:
// 0.26 ms of planning for 0.19 ms of execution, measured with
// pg_stat_statements.
//
// And the outbox trigger leaves River's insert notification to the store,
// which sends it once the batch has committed (router.outbox_notify, migration
// 0013; see outboxWake): a transaction that notifies holds a database-wide
// lock through its commit, and batches would commit one at a time.
//
// And the outbox trigger skips the jobs these statements make `succeeded`
// (router.outbox_by_statement, migration 0015): the only batched statement that
// does, the win, writes their events and River's jobs itself, set-based,
// instead of a PL/pgSQL call and two single-row inserts per job. Any other
// terminal state written here still goes through the trigger. A batched
// statement that made jobs `succeeded` without writing their events would lose
// them: TestBatchedWinWritesOneEventPerJob guards the win.
//
// And no lock is waited for longer than the wait the batch is run with
// (lock_timeout, the statement's one argument): batchLockWait for a shared
// batch, aloneLockWait for an item run alone. A batch carries many callers'
// claims and wins, and its leader runs it while the next batch waits: a claim
// whose key row, or a win whose job row, another transaction holds — an
// operator's transaction left open in psql, a replica that lost its connection
// in the middle of a cancellation, retry or resolution, whose locks PostgreSQL
// keeps until it notices — held the batch, and every claim and win of the
// replica queued behind it, until execTimeout (30 s), and CreateJob ran the
// claim three more times. Then, with one lock wait of a second for all, for a
// second each time the blocked caller sent its request again (found in review:
// every tenant's creations and completions on the replica took a second longer
// for as long as one key row stayed held). Now a batch waits batchLockWait
// (100 ms): the waits these statements have in normal operation are a
// concurrent batch's commit (two claims of one key) or a job's short
// transaction (a cancellation, a settlement), milliseconds. Past it the
// statement is cancelled (lock_not_available, an ERROR: the transaction wrote
// nothing), the batch is split at once — its wins together (win by win if
// that fails too), its claims one by one — or, when the lock was an owner's
// max_live_jobs lock, which the batch says, the claims taking no such lock
// together and each limited owner's together (splitClaims) — (execPathCommits,
// runClaims, runWins), each again with batchLockWait — so the others commit and only the
// blocked one fails there. Its caller then runs it alone, on its own goroutine
// and outside the batches, waiting for the row up to aloneLockWait (a second),
// while new batches go on: a claim once (CreateJob; ErrBusy past it:
// claimOutcome), a win on its retries (OfferCompletion). So many items at
// once, and no more, since each holds a pool connection while it waits
// (aloneTurns: an item that gets no turn within its wait is answered busy,
// unsent). The setting is one
// more call in this same statement: no round trip of its own. The webhook
// delivery writes' batches (execDeliveryWrites) share it: an event row held
// elsewhere fails their batch after batchLockWait, each write runs again alone
// in the batch with batchLockWait, and a write still blocked is run once more
// by its caller with aloneLockWait (writeDelivery).
var batchSettingsSQL = `SELECT set_config('enable_seqscan', 'off', true), set_config('enable_bitmapscan', 'off', true),
	set_config('enable_hashjoin', 'off', true), set_config('enable_mergejoin', 'off', true), set_config('jit', 'off', true),
	set_config('plan_cache_mode', 'force_generic_plan', true), set_config('router.outbox_notify', 'after_commit', true),
	set_config('router.outbox_by_statement', 'on', true), set_config('lock_timeout', $1, true)`

// batchLockWait is the longest a shared batch's statement waits for a row
// lock (see batchSettingsSQL): a row held for longer is waited for by its own
// caller, alone (aloneLockWait).
const batchLockWait = 100 * time.Millisecond

// defaultAloneLockWait is the longest an item blocked in its batch waits for
// the row, run alone on its caller's goroutine (see batchSettingsSQL).
const defaultAloneLockWait = time.Second

// aloneLockWaitNS is aloneLockWait's value (nanoseconds): a test may lengthen
// it to watch a blocked item wait (SetAloneLockWait).
var aloneLockWaitNS atomic.Int64

func init() { aloneLockWaitNS.Store(int64(defaultAloneLockWait)) }

// aloneLockWait is the longest an item that its batch's lock wait
// (batchLockWait) failed waits for the row when its caller runs it alone.
func aloneLockWait() time.Duration { return time.Duration(aloneLockWaitNS.Load()) }

// batchedStmt is one of the batched statements (claim, win) with its
// arguments, what to do with each row it returns, and (optional) what to do
// once its transaction has committed.
type batchedStmt struct {
	// before, when not "", is a statement run just before sql in the same
	// transaction, whose rows are not read (the claim's max_live_jobs locks:
	// liveLimitLock). Its lock wait that runs out is a *liveLimitBusyError.
	before     string
	beforeArgs []any
	// rowWait, when not 0, bounds sql's lock waits once before has run (one
	// more call of lockWaitSQL between them; only a claim run alone has one:
	// claimBatch).
	rowWait   time.Duration
	sql       string
	args      []any
	each      func(pgx.Rows) error
	committed func()
}

// queryBatched runs batched statements with index plans (see batchSettingsSQL),
// in one round trip and one implicit transaction (a pipeline: the settings,
// then each statement in turn), and hands each statement's rows to its each.
// No row lock is waited for longer than lockWait (batchLockWait in a shared
// batch, aloneLockWait for an item run alone by its caller). An error in any
// of them rolls them all back; after the commit each statement's committed
// runs.
func (s *Store) queryBatched(ctx context.Context, lockWait time.Duration, stmts ...batchedStmt) error {
	if s.onBatched != nil {
		s.onBatched(len(stmts))
	}
	b := &pgx.Batch{}
	b.Queue(batchSettingsSQL, lockWaitArg(lockWait))
	for _, st := range stmts {
		if s.onPlan != nil {
			// The plan that runs is the generic one from the plan cache; an
			// EXPLAIN given the arguments would plan for their values instead.
			// EXPLAIN EXECUTE of a prepared copy goes through the cache (and
			// a generic plan does not depend on the values: NULLs will do).
			nulls := strings.TrimSuffix(strings.Repeat("NULL, ", len(st.args)), ", ")
			b.Queue("PREPARE router_plan_check AS " + st.sql)
			b.Queue("EXPLAIN (FORMAT JSON) EXECUTE router_plan_check(" + nulls + ")")
			b.Queue("DEALLOCATE router_plan_check")
		}
		if st.before != "" {
			b.Queue(st.before, st.beforeArgs...)
			if st.rowWait != 0 {
				b.Queue(lockWaitSQL, lockWaitArg(st.rowWait))
			}
		}
		b.Queue(st.sql, st.args...)
	}
	conn, err := s.acquireBatchConn(ctx)
	if err != nil {
		return err
	}
	defer conn.Release()
	br := conn.SendBatch(ctx, b)
	err = func() error {
		if _, err := br.Exec(); err != nil {
			return err
		}
		for _, st := range stmts {
			if s.onPlan != nil {
				var plan []byte
				if _, err := br.Exec(); err != nil {
					return err
				}
				if err := br.QueryRow().Scan(&plan); err != nil {
					return err
				}
				if _, err := br.Exec(); err != nil {
					return err
				}
				s.onPlan(plan)
			}
			if st.before != "" {
				if _, err := br.Exec(); err != nil {
					if Busy(err) {
						return &liveLimitBusyError{wait: lockWait, err: err}
					}
					return err
				}
				if st.rowWait != 0 {
					if _, err := br.Exec(); err != nil {
						return err
					}
				}
			}
			if err := readRows(br, st.each); err != nil {
				return err
			}
		}
		return nil
	}()
	if cerr := br.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	for _, st := range stmts {
		if st.committed != nil {
			st.committed()
		}
	}
	return nil
}

// batchAcquireWait bounds how long a batch waits for its connection, within
// the batch's own bound (execTimeout): pgxpool pings a connection idle for
// more than a second before handing it out, and gives up on one that does not
// answer within DefaultPingTimeout for the next, or a new one; a pool whose
// connections all died silently, or that stays exhausted, fails the batch
// after this rather than after execTimeout, with nothing sent (acquireError),
// and its leader goes on to the next batch.
const batchAcquireWait = 5 * time.Second

// acquireBatchConn takes a connection from the pool for a batch, waiting up
// to s.acquireWait. Its error is an *acquireError.
func (s *Store) acquireBatchConn(ctx context.Context) (*pgxpool.Conn, error) {
	actx, cancel := context.WithTimeout(ctx, s.acquireWait)
	defer cancel()
	conn, err := s.pool.Acquire(actx)
	if err != nil {
		return nil, &acquireError{err: err}
	}
	return conn, nil
}

// acquireError is a batch that got no connection: nothing of it was sent, so
// it certainly changed nothing (mayHaveReached).
type acquireError struct{ err error }

func (e *acquireError) Error() string {
	return "no database connection for the batch: " + e.err.Error()
}
func (e *acquireError) Unwrap() error { return e.err }

func readRows(br pgx.BatchResults, each func(pgx.Rows) error) error {
	rows, err := br.Query()
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		if err := each(rows); err != nil {
			return err
		}
	}
	return rows.Err()
}
