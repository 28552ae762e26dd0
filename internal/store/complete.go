package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgerrcode"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// NotifyChannel is the LISTEN/NOTIFY channel on which job state changes are
// announced: every change but a batched win, which is announced only for a
// job that a waiter watches (WatchJob). It crosses replicas. The payload is
// "<job id>", "<job id>:<state>" or, for a batched win,
// "<job id>:<state>:<origin>" where origin names the Store that won it (see
// Listener.SkipNotificationsOf).
const NotifyChannel = "router_job"

// Completion is a valid output offered by an attempt.
type Completion struct {
	JobID              string
	AttemptID          string
	ReadVersion        int64 // the job version the attempt read when it started
	Result             json.RawMessage
	Usage              any
	ProviderResponseID string
	ResponseModel      string
	LatencyMS          int64
}

// casSQL is the compare-and-swap of SPEC §6.5: it succeeds only when the job is
// still at the version the attempt read, nobody has completed it, and the
// attempt is still in flight. The win is one statement (one round trip, one
// commit): the job, its key's expiry, the winning attempt, the release of the
// job's lease and the notification change together or not at all. Locks are
// taken job row first (the other updates read j), as everywhere else. The
// winning attempt's error is cleared: one that recovery marked unknown
// (lease_expired, outcome_unknown) and whose late answer wins has a known
// outcome, and would otherwise read as unknown beside its succeeded job.
// Its siblings are settled in the same update (settleSiblingsSQL): unknown
// ones lost, with a race event; `starting` ones (created, not yet sent: a
// hedge or failover whose creation held the job row as the win came)
// cancelled as never sent, so that they are not sent for a job that has
// succeeded (MarkAttemptRunning then finds them no longer starting).
var casSQL = `
WITH j AS (
    UPDATE jobs SET state = 'succeeded', result = $3, completed_by = $4, version = version + 1,
        error = NULL, updated_at = now(), finished_at = now(), lease_owner = NULL, lease_expires_at = NULL
    WHERE id = $1 AND version = $2 AND completed_by IS NULL
      AND EXISTS (SELECT 1 FROM attempts a WHERE a.id = $4 AND a.job_id = $1 AND a.state IN ('starting', 'running', 'unknown'))
    RETURNING id
), k AS (
    UPDATE idempotency_keys SET expires_at = now() + $5::interval
    WHERE job_id IN (SELECT id FROM j)
), a AS (
    UPDATE attempts SET state = 'won', usage = $6, provider_response_id = nullif($7, ''),
        response_model = nullif($8, ''), latency_ms = $9, finished_at = now(), error = NULL,
        lease_owner = NULL, lease_expires_at = NULL
    WHERE id = $4 AND EXISTS (SELECT 1 FROM j)
), u AS (
    UPDATE attempts SET ` + settleSiblingsSQL + `
    WHERE job_id = $1 AND id <> $4 AND state IN ('unknown', 'starting') AND EXISTS (SELECT 1 FROM j)
    RETURNING id, provider, state
), e AS (
    INSERT INTO race_events (job_id, attempt_id, kind, provider, detail)
    SELECT $1, id, 'lost', provider, 'unknown attempt settled as lost: another attempt won' FROM u WHERE state = 'lost'
), n AS (
    SELECT pg_notify('` + NotifyChannel + `', id::text || ':succeeded') FROM j
)
SELECT (SELECT count(*) FROM j), (SELECT count(*) FROM n)`

// settleSiblingsSQL is the SET list of the update that settles, when their
// job succeeds, its other attempts that are unknown or starting (in casSQL,
// winSQL and a `succeeded` resolution): an unknown one becomes `lost`, its
// error marked "breaker": "failure" (markedFailureSQL: its breaker counted
// its unknown end as a failure, and /v1/providers' stats count it so, not
// as a lost answer); a
// starting one was never sent and now never will be, and is recorded as
// RecordNotSent records one (cancelled, kind not_sent, finished, its lease
// cleared). One update, on the rows the win already visits, so the batched
// win (SPEC §14) does no extra scan. A sibling created after the win's
// statement took its snapshot is not seen here: MarkAttemptRunning refuses
// to send an attempt of an ended job.
var settleSiblingsSQL = `state = CASE WHEN state = 'unknown' THEN 'lost' ELSE 'cancelled' END,
        error = CASE WHEN state = 'unknown' THEN ` + markedFailureSQL(`error`) + ` ELSE jsonb_build_object('kind', '` + notSentKind + `', 'fault', 'router',
            'message', 'the request was never sent: another attempt had completed the job') END,
        finished_at = CASE WHEN state = 'unknown' THEN finished_at ELSE now() END,
        lease_owner = CASE WHEN state = 'unknown' THEN lease_owner END,
        lease_expires_at = CASE WHEN state = 'unknown' THEN lease_expires_at END`

// winSQL is casSQL for many jobs at once (one attempt per job): the batched
// win of concurrent attempts, one round trip and one commit for all of them.
// It returns, for each job won, the job and its winning attempt as the
// statement left them (the columns of jobColumns and attemptColumns) and
// whether the job had no other attempt and no race event. Rows are reached
// through = ANY(ARRAY(…)) so the plan is an index lookup whatever the planner
// guesses of the CTEs' sizes (a join against a CTE can otherwise become a
// sequential scan of a table that only grows). The attempt must still be in flight
// (starting or running): one that recovery marked unknown wins, if at all,
// through lateWin, under the job's lock. That check is a scalar subquery, not
// EXISTS: PostgreSQL turns an EXISTS into a join, and under load it chose to
// read the whole in-flight index (every attempt in flight, and every one
// finished since the last VACUUM) and match it against the batch; a scalar
// subquery stays a lookup by primary key per job. A win is announced (NOTIFY)
// only for a job a waiter watches (WatchJob): a notifying transaction holds a
// database-wide lock through its commit, which would make concurrent batches
// commit one at a time. For an owner with a webhook (or a configured one
// removed less than the redelivery window ago, migration 0022: still one
// lookup by primary key) the statement writes the outbox itself (ev, rj: the
// event and River's job, as the outbox trigger of migration 0006 writes them,
// which skips these rows: batchSettingsSQL, migration 0015; the job's args
// carry the owner, migration 0026, so that a delivery over its owner's limit
// is snoozed without a read); the last column
// says whether it did, and the store wakes River after the commit
// (outboxWake).
var winSQL = `
WITH w AS (
    SELECT * FROM unnest($1::uuid[], $2::uuid[], $3::bigint[], $4::text[], $5::text[], $6::text[], $7::text[], $8::bigint[])
        AS w(job_id, attempt_id, read_version, result, usage, response_id, response_model, latency_ms)
    ORDER BY job_id
), j AS (
    UPDATE jobs SET state = 'succeeded', result = w.result::jsonb, completed_by = w.attempt_id,
        version = jobs.version + 1, error = NULL, updated_at = now(), finished_at = now(),
        lease_owner = NULL, lease_expires_at = NULL
    FROM w
    WHERE jobs.id = w.job_id AND jobs.version = w.read_version AND jobs.completed_by IS NULL
      AND (SELECT a.state FROM attempts a WHERE a.id = w.attempt_id AND a.job_id = w.job_id) IN ('starting', 'running')
    RETURNING jobs.id, w.attempt_id, jobs.owner, jobs.operation, jobs.idempotency_key, jobs.fingerprint,
        jobs.prompt_version, jobs.route, jobs.input, jobs.params, jobs.state, jobs.version, jobs.created_at,
        jobs.updated_at, jobs.finished_at, jobs.result, jobs.completed_by, jobs.error, jobs.routing, jobs.attempt_base,
        jobs.watched
), ev AS (
    INSERT INTO job_events (job_id, owner, type, job_version)
    SELECT j.id, j.owner, 'job.' || j.state, j.version FROM j
    WHERE EXISTS (SELECT 1 FROM webhook_owners o WHERE o.owner = j.owner
                  AND (o.removed_until IS NULL OR o.removed_until > now()))
    RETURNING id, job_id, owner
), rj AS (
    INSERT INTO river_job (args, kind, max_attempts, queue, priority, metadata, tags)
    SELECT jsonb_build_object('event_id', ev.id, 'owner', ev.owner), 'webhook_delivery', 10000, 'webhooks', 1, '{}', '{}' FROM ev
), k AS (
    UPDATE idempotency_keys SET expires_at = now() + $9::interval
    WHERE job_id = ANY (ARRAY(SELECT id FROM j))
), a AS (
    UPDATE attempts AS a SET state = 'won', usage = w.usage::jsonb, provider_response_id = nullif(w.response_id, ''),
        response_model = nullif(w.response_model, ''), latency_ms = w.latency_ms, finished_at = now(), error = NULL,
        lease_owner = NULL, lease_expires_at = NULL
    FROM w
    WHERE a.id = ANY (ARRAY(SELECT attempt_id FROM j)) AND a.id = w.attempt_id
    RETURNING ` + attemptColumns + `
), u AS (
    UPDATE attempts SET ` + settleSiblingsSQL + `
    WHERE job_id = ANY (ARRAY(SELECT id FROM j)) AND id <> ALL (ARRAY(SELECT attempt_id FROM j))
      AND state IN ('unknown', 'starting')
    RETURNING id, job_id, provider, state
), e AS (
    INSERT INTO race_events (job_id, attempt_id, kind, provider, detail)
    SELECT job_id, id, 'lost', provider, 'unknown attempt settled as lost: another attempt won' FROM u WHERE state = 'lost'
), n AS (
    SELECT pg_notify('` + NotifyChannel + `', id::text || ':succeeded:' || $10) FROM j WHERE j.watched
)
SELECT (SELECT count(*) FROM n), j.id::text,
    j.owner, j.operation, j.idempotency_key, j.fingerprint, j.prompt_version, j.route, j.input, j.params,
    j.state, j.version, j.created_at, j.updated_at, j.finished_at, now() + $9::interval, NULL::timestamptz, j.result,
    j.completed_by::text, j.error, j.routing, j.attempt_base,
    a.*,
    NOT EXISTS (SELECT 1 FROM attempts x WHERE x.job_id = j.id AND x.id <> j.attempt_id)
        AND NOT EXISTS (SELECT 1 FROM race_events r WHERE r.job_id = j.id),
    EXISTS (SELECT 1 FROM ev WHERE ev.job_id = j.id)
FROM j LEFT JOIN a ON a.id = j.attempt_id::text`

// winRequest is one Complete waiting for its batch.
type winRequest struct {
	c    Completion
	done chan struct{}
	won  bool
	job  *Job // the whole job as the win left it, when it had no other attempt and no race event
	// announced: the win wrote an outbox event (the owner has a webhook)
	// and River is to be woken once it has committed.
	announced bool
	err       error
}

// Complete offers a valid output through the compare-and-swap. won reports whether
// this attempt won; a loser is recorded `lost` (or `cancelled` when the job was
// cancelled; an attempt resolved meanwhile keeps its resolution) with a race
// event, and its payload is discarded (OfferCompletion says which).
//
// Concurrent completions are coalesced into one statement and one commit. A
// database error does not drop a valid answer: the database is asked whether
// the win happened (a commit whose answer was lost), and if nobody has
// completed the job the compare-and-swap is tried again, with backoff: while
// the database does not answer (a restart, a fail-over), for as long as an
// attempt's other ends are tried (finishRetryFor, five seconds); after an
// error the database answered, up to winTries tries in all. A job row that
// another transaction holds past the batch's lock wait (batchSettingsSQL)
// fails a try like any database error; the tries after it go out alone
// (outside the shared batches), and if the row is still held after the last
// one the error is ErrBusy: the attempt stays in flight,
// and when its lease expires recovery decides, as after any failed win. A
// valid answer that lost (the job already won or cancelled) is recorded under
// the job row's lock, waited for up to transitionLockWait: past it, ErrBusy
// likewise.
func (s *Store) Complete(ctx context.Context, c Completion) (won bool, err error) {
	won, _, err = s.CompleteJob(ctx, c)
	return won, err
}

// CompleteJob is Complete that also returns, when this attempt won in the
// batched compare-and-swap and was its job's only attempt with no race event,
// the job exactly as the win left it — what GetJob would read right after the
// commit (attempts: just the winner; race events: none) — so that a waiter on
// this replica can answer without reading the job back. job is nil otherwise
// (a late win, a job with other attempts): read the job then.
//
// A caller must only trust job as the whole job when no other attempt of the
// job can have been created between the statement's snapshot and its commit:
// the statement sees attempts committed before it began, and a concurrent
// CreateAttempt that commits while the win waits for the job's row lock is not
// in that snapshot (internal/race knows whether it started one).
func (s *Store) CompleteJob(ctx context.Context, c Completion) (won bool, job *Job, err error) {
	o, err := s.OfferCompletion(ctx, c)
	return o.Won, o.Job, err
}

// Offered is what OfferCompletion did with a valid output.
type Offered struct {
	// Won: this attempt won the compare-and-swap; Job is as CompleteJob's.
	Won bool
	Job *Job
	// State is the state the attempt was left in: won; lost, when another
	// attempt had won the job; cancelled, when the job had been cancelled
	// (the output is discarded, race event "discarded"); or, when the attempt
	// had been settled otherwise before its output came (an operator's or
	// reconciliation's resolution, say failed), that state, which is kept
	// (race event "discarded"). A resolution `succeeded` leaves it won:
	// State is then won with Won false (the job's result is the
	// resolution's, not this output's). "" with an error.
	State string
	// UsageStored says whether the output's usage is on the attempt's row:
	// always for a win; for a discarded output, when its attempt had none
	// yet, or only the router's estimate (discard, discardResolvedWin). The
	// race counts a discarded output's usage in the metrics only then, so
	// that router_cost_usd_total and the job's cost_usd agree.
	UsageStored bool
}

// OfferCompletion is CompleteJob that also says what the attempt was
// recorded as (Offered.State): only a lost attempt lost a race; an output
// discarded because its job was cancelled, or because its attempt had been
// resolved meanwhile, did not.
//
// A valid answer is not given up because its caller went away, so its
// database calls outside the batches run without the caller's cancellation;
// each is bounded instead (settleWait; the late path's transaction
// transitionLockWait more), so that a connection gone silent ends them with
// an error rather than holding the answer, and the runner that offered it,
// for ever.
func (s *Store) OfferCompletion(ctx context.Context, c Completion) (Offered, error) {
	bg := context.WithoutCancel(ctx)
	var (
		off   Offered
		late  bool  // not won by this answer: recorded on the late path
		last  error // the latest try's error
		alone bool
		try   int
	)
	// The tries run under writeWhileUnreachable, for as long as an
	// attempt's other ends are tried (finishRetryFor): a database that does
	// not answer (a restart, a fail-over) is waited out, not taken as the
	// answer's loss. Trying again is safe: a try that committed is found by
	// the read-back below (or, its version moved, by lateWin). A try the
	// database answered with an error (a row held past the lock wait, a
	// statement's error) is tried again only up to winTries in all, as before.
	err := writeWhileUnreachable(bg, finishRetryFor, func(context.Context) error {
		defer func() { try++ }()
		req := &winRequest{c: c, done: make(chan struct{})}
		start := commitClock() // the try's own wait, as a claim's
		if alone {
			s.winAlone(req)
		} else {
			s.paths.enqueue(&pathCommit{win: req})
			<-req.done
		}
		if req.err == nil {
			s.commitWaited("win", start)
			if req.won {
				off = Offered{Won: true, Job: req.job, State: AttemptWon, UsageStored: true}
				return nil
			}
			late = true
			return nil
		}
		last = req.err
		rctx, cancel := context.WithTimeout(bg, s.settleWait)
		j, rerr := s.GetJobAny(rctx, c.JobID)
		cancel()
		if rerr == nil && j.CompletedBy != nil {
			if *j.CompletedBy == c.AttemptID && !resolvedIn(j, c.AttemptID) {
				// The win committed; its answer was lost, and with it whether
				// it wrote an outbox event: wake River anyway (a spare wake
				// costs one fetch), or the event waits for River's next
				// periodic fetch.
				s.wakeDeliveries()
				off = Offered{Won: true, State: AttemptWon, UsageStored: true}
				return nil
			}
			// Someone else won, or a resolution completed the job from this
			// very attempt (not this answer's win): recorded below.
			late = true
			return nil
		}
		// The job's row is held by another transaction that outlasted the
		// batch's lock wait (batchLockWait): the next tries go out alone,
		// on this goroutine, each waiting for the row up to aloneLockWait,
		// so that they hold up no batch of other callers' claims and wins
		// while they wait.
		alone = alone || Busy(last)
		if !unreachable(last) && try < winTries-1 {
			return errWinAgain // answered, but worth another try (writeWhileUnreachable's backoff)
		}
		return last
	})
	switch {
	case err != nil:
		if errors.Is(err, errWinAgain) {
			err = last // the budget ran out on an answered try
		}
		if Busy(err) {
			err = &BusyError{What: "job " + c.JobID, Wait: aloneLockWait(), Err: err}
		}
		return Offered{}, fmt.Errorf("compare-and-swap: %w", err)
	case !late:
		return off, nil
	}
	// The late path waits for the job's row (and the attempt's) up to
	// transitionLockWait, whatever ctx says: past it the answer is not
	// recorded (ErrBusy), and the attempt stays in flight until its lease
	// expires and recovery decides, as after any failed win. Its whole
	// transaction gets settleWait more, for its round trips: a connection
	// that stops answering ends it with an error, the same way.
	tctx, cancel := context.WithTimeout(bg, transitionLockWait+s.settleWait)
	defer cancel()
	err = s.inTx(tctx, func(tx pgx.Tx) error {
		var e error
		off, e = s.lateWin(tctx, tx, c)
		return e
	})
	if err != nil {
		return Offered{}, jobBusy(err, c.JobID, transitionLockWait)
	}
	return off, nil
}

// winTries is how many tries OfferCompletion gives a win the database
// answered with an error (a row held past the lock wait, a statement's
// error); tries the database did not answer go on for finishRetryFor.
const winTries = 5

// errWinAgain is a try of a win that the database answered with an error,
// while tries remain (winTries): writeWhileUnreachable, which takes it as
// unanswered (it is no store error and wraps no PgError), tries again.
var errWinAgain = errors.New("the win's try failed; trying again")

// resolvedIn says whether attempt id of j carries a resolution (an
// operator's or reconciliation's verdict, ResolveAttempt): a won attempt
// that does was won by that resolution, not by an answer's compare-and-swap.
func resolvedIn(j *Job, id string) bool {
	for _, a := range j.Attempts {
		if a.ID == id {
			var e struct {
				Resolution json.RawMessage `json:"resolution"`
			}
			return len(a.Error) > 0 && json.Unmarshal(a.Error, &e) == nil && len(e.Resolution) > 0
		}
	}
	return false
}

// settleWait bounds each database call that a win (OfferCompletion) or a
// claim (claimOutcome) makes without its caller's cancellation after its
// batch: reading whether a win whose answer was lost committed, or which job
// holds a key. One round trip, with pgxpool's ping of an idle connection
// (DefaultPingTimeout) and maybe a dial before it; a read past it is given
// up like a lost answer (the next try, or an error).
const settleWait = 5 * time.Second

// execWins runs one batch of wins: one statement per round of distinct jobs
// (two valid answers for one job in one batch go in successive rounds).
func (s *Store) execWins(ctx context.Context, batch []*winRequest) {
	for len(batch) > 0 {
		var round []*winRequest
		round, batch = winRound(batch)
		s.runWins(ctx, round, batchLockWait)
		for _, w := range round {
			close(w.done)
		}
	}
}

// winAlone runs one win in a statement and transaction of its own, on the
// caller's goroutine, outside the shared batches, waiting for its rows up to
// aloneLockWait (see OfferCompletion).
//
// It runs on a context of its own, never its caller's: the win records an
// answer that was received (and maybe paid for), and a valid answer is not
// given up because its caller went away (OfferCompletion). Its statement
// waits for the row at most aloneLockWait anyway.
//
// A win that gets no alone turn (runAlone) is not sent: its error is Busy,
// one more busy try for OfferCompletion.
func (s *Store) winAlone(req *winRequest) {
	if err := s.runAlone(context.Background(), &s.aloneOwed, s.paths.onAlone, func(ctx context.Context, wait time.Duration) {
		s.runWins(ctx, []*winRequest{req}, wait)
	}); err != nil {
		req.err = err
	}
}

// runWins executes one round, retrying a batch the database rolled back whole;
// on any other error each win is tried alone.
func (s *Store) runWins(ctx context.Context, ws []*winRequest, lockWait time.Duration) {
	err := retryRolledBack(func() error { return s.winBatch(ctx, ws, lockWait) })
	if err == nil {
		if anyWon(ws) {
			s.committed("win", len(ws))
		} else {
			// Every win lost its compare-and-swap: the statement wrote
			// nothing, so its commit waited for no WAL flush.
			s.opt.Observer.Batch("win", len(ws))
		}
		return
	}
	if len(ws) == 1 {
		ws[0].err = err
		return
	}
	for _, w := range ws {
		s.runWins(ctx, []*winRequest{w}, lockWait)
	}
}

// anyWon reports whether a win of ws won, once their statement has run.
func anyWon(ws []*winRequest) bool {
	for _, w := range ws {
		if w.won {
			return true
		}
	}
	return false
}

func (s *Store) winBatch(ctx context.Context, ws []*winRequest, lockWait time.Duration) error {
	return s.queryBatched(ctx, lockWait, s.winStmt(ws))
}

// winStmt is the win statement for ws (one per job), whose rows tell each
// win whether it won.
func (s *Store) winStmt(ws []*winRequest) batchedStmt {
	n := len(ws)
	jobIDs, attIDs := make([]string, n), make([]string, n)
	versions, latencies := make([]int64, n), make([]int64, n)
	results, respIDs, models := make([]string, n), make([]string, n), make([]string, n)
	usages := make([]*string, n)
	byJob := make(map[string]*winRequest, n)
	for i, w := range ws {
		c := w.c
		w.won, w.job, w.announced = false, nil, false
		byJob[c.JobID] = w
		jobIDs[i], attIDs[i], versions[i], latencies[i] = c.JobID, c.AttemptID, c.ReadVersion, c.LatencyMS
		results[i], respIDs[i], models[i] = string(c.Result), c.ProviderResponseID, c.ResponseModel
		if u := jsonOrNil(c.Usage); u != nil {
			str := string(u)
			usages[i] = &str
		}
	}
	each := func(rows pgx.Rows) error {
		var j Job
		var a Attempt
		var notified int
		var whole, announced bool
		dest := append(append(append([]any{&notified}, j.dest()...), a.dest()...), &whole, &announced)
		if err := rows.Scan(dest...); err != nil {
			return err
		}
		w := byJob[j.ID]
		if w == nil {
			return nil
		}
		w.won, w.announced = true, announced
		if whole {
			j.Attempts, j.RaceEvents = []Attempt{a}, []RaceEvent{}
			j.sumCosts()
			j.WonResult = w.c.Result
			w.job = &j
		}
		return nil
	}
	return batchedStmt{sql: winSQL, each: each, args: []any{jobIDs, attIDs, versions, results, usages, respIDs, models,
		latencies, s.opt.KeyRetention, s.origin}, committed: func() { s.announceWins(ws) }}
}

// lateWin handles a valid result whose compare-and-swap failed. The version
// moved, but when nobody has completed the job (it went `unknown` because this
// attempt's lease expired, or back to `running` after another attempt's
// resolution) and this attempt is still running or unknown, the result is the
// first valid completion and wins, under the job row's lock. Otherwise it is
// discarded with a race event. It returns the state the attempt was left in,
// whether this output won and whether its usage was stored (Offered, without
// Job). It bounds tx's lock waits to
// transitionLockWait, in the same round trip as the job's lock
// (lockJobWaiting).
func (s *Store) lateWin(ctx context.Context, tx pgx.Tx, c Completion) (Offered, error) {
	state, _, err := lockJobWaiting(ctx, tx, c.JobID, "", transitionLockWait)
	if err != nil {
		return Offered{}, err
	}
	var attemptState string
	var completed, resolved bool
	if err := tx.QueryRow(ctx, `SELECT a.state, j.completed_by IS NOT NULL, a.error->'resolution' IS NOT NULL
		FROM attempts a JOIN jobs j ON j.id = a.job_id
		WHERE a.id = $1`, c.AttemptID).Scan(&attemptState, &completed, &resolved); err != nil {
		return Offered{}, notFound(err)
	}
	if attemptState == AttemptWon {
		if resolved {
			// Won by a `succeeded` resolution (an operator's, reconciliation's)
			// while this answer was on its way: the job's result is the
			// resolution's, and this answer is not a second win.
			stored, err := s.discardResolvedWin(ctx, tx, c)
			return Offered{State: AttemptWon, UsageStored: stored}, err
		}
		// This very win committed already (a batch re-sent after its answer was
		// lost): it is a win, not a late result. Whether it wrote an outbox
		// event went with the lost answer: wake River anyway (a spare wake
		// costs one fetch), or the event waits for River's next periodic
		// fetch. The event, if any, committed with that win: this
		// transaction, which writes nothing, need not commit first.
		s.wakeDeliveries()
		return Offered{Won: true, State: AttemptWon, UsageStored: true}, nil
	}
	if completed || (state != JobRunning && state != JobUnknown) ||
		(attemptState != AttemptRunning && attemptState != AttemptUnknown) {
		return s.discard(ctx, tx, c)
	}
	var version int64
	if err := tx.QueryRow(ctx, `SELECT version FROM jobs WHERE id = $1`, c.JobID).Scan(&version); err != nil {
		return Offered{}, err
	}
	c.ReadVersion = version
	var n, notified int
	if err := tx.QueryRow(ctx, casSQL, c.JobID, c.ReadVersion, c.Result, c.AttemptID, s.opt.KeyRetention,
		jsonOrNil(c.Usage), c.ProviderResponseID, c.ResponseModel, c.LatencyMS).Scan(&n, &notified); err != nil {
		return Offered{}, err
	}
	if n == 1 {
		return Offered{Won: true, State: AttemptWon, UsageStored: true}, nil
	}
	return s.discard(ctx, tx, c) // not reached: the job's row is locked, and its version read under the lock
}

// discardResolvedWin records a valid result whose attempt a `succeeded`
// resolution had already won (its job's result is the resolution's): the
// attempt stays won; the provider's usage is stored when the attempt has
// none, or only the router's estimate, since the provider billed the answer
// (what the resolution gave, if anything, stays); and a "discarded" race
// event records the answer. stored says whether the usage was stored.
func (s *Store) discardResolvedWin(ctx context.Context, tx pgx.Tx, c Completion) (stored bool, err error) {
	if u := jsonOrNil(c.Usage); u != nil {
		tag, err := tx.Exec(ctx, `UPDATE attempts SET usage = $2,
				provider_response_id = coalesce(provider_response_id, nullif($3, '')),
				response_model = coalesce(response_model, nullif($4, ''))
			WHERE id = $1 AND (usage IS NULL OR usage = 'null'::jsonb
				OR (usage->>'estimated' = 'true' AND $2::jsonb->>'estimated' IS DISTINCT FROM 'true'))`,
			c.AttemptID, u, c.ProviderResponseID, c.ResponseModel)
		if err != nil {
			return false, err
		}
		stored = tag.RowsAffected() > 0
	}
	_, err = tx.Exec(ctx, `INSERT INTO race_events (job_id, attempt_id, kind, provider, latency_ms, usage, detail)
		SELECT job_id, id, 'discarded', provider, $2, $3, $4 FROM attempts WHERE id = $1`,
		c.AttemptID, c.LatencyMS, jsonOrNil(c.Usage),
		"a valid result arrived after this attempt was resolved succeeded; discarded (the job's result is the resolution's)")
	if err != nil {
		return false, err
	}
	return stored, nil
}

// discard records a valid result that lost the compare-and-swap, and returns
// the state the attempt was left in (Offered.State): lost when another
// attempt won the job, cancelled when the job was cancelled, else the state
// it had been settled in (kept). The result's usage is stored on the attempt
// when discard settles it, and on one another hand had already settled while
// its request was out (lateUsageSQL: the job's cancellation cancelled it, a
// win settled its unknown outcome `lost`, a resolution failed it) when it has
// none yet or only the router's estimate: the provider billed the answer.
// Offered.UsageStored says whether it was.
func (s *Store) discard(ctx context.Context, tx pgx.Tx, c Completion) (Offered, error) {
	var jobState string
	if err := tx.QueryRow(ctx, `SELECT state FROM jobs WHERE id = $1`, c.JobID).Scan(&jobState); err != nil {
		return Offered{}, notFound(err)
	}
	attemptState, kind, detail := AttemptLost, "lost", "a valid result arrived after another attempt won; discarded"
	from := "'starting', 'running', 'unknown'"
	switch jobState {
	case JobSucceeded:
	case JobCancelled:
		attemptState, kind, detail = AttemptCancelled, "discarded", "a valid result arrived after the job was cancelled; discarded"
	default:
		// The attempt was settled otherwise (an operator resolved it as failed):
		// keep that, and record the result that came after.
		kind, detail = "discarded", "a valid result arrived after this attempt was settled; discarded"
		from = "'starting', 'running'"
	}
	u := jsonOrNil(c.Usage)
	tag, err := tx.Exec(ctx, `UPDATE attempts SET state = $2, usage = $3, provider_response_id = nullif($4, ''),
			response_model = nullif($5, ''), latency_ms = $6, finished_at = coalesce(finished_at, now()),
			lease_owner = NULL, lease_expires_at = NULL
		WHERE id = $1 AND state IN (`+from+`)`,
		c.AttemptID, attemptState, u, c.ProviderResponseID, c.ResponseModel, c.LatencyMS)
	if err != nil {
		return Offered{}, err
	}
	stored := tag.RowsAffected() > 0 && u != nil
	if tag.RowsAffected() == 0 {
		// Settled before its output came (the job's cancellation cancelled
		// it, a resolution failed it, a win settled it lost while its outcome
		// was unknown): that stays.
		if err := tx.QueryRow(ctx, `SELECT state FROM attempts WHERE id = $1`, c.AttemptID).Scan(&attemptState); err != nil {
			return Offered{}, notFound(err)
		}
		if u != nil {
			// Settled without usage (or with the router's estimate, when its
			// run was cut first, or recorded it unknown with one): the
			// provider's answer says what it billed. Stored as
			// RecordCancelledUsage stores it, replacing an estimate but never
			// reported usage, so that the attempt has its cost_usd and the
			// job's cost_usd and lost_cost_usd count it, as the metrics do
			// (the race counts a discarded answer's usage once, and only
			// when stored: Offered.UsageStored).
			var n int
			if err := tx.QueryRow(ctx, lateUsageSQL, c.AttemptID, u).Scan(&n); err != nil {
				return Offered{}, err
			}
			stored = n > 0
		}
	}
	_, err = tx.Exec(ctx, `INSERT INTO race_events (job_id, attempt_id, kind, provider, latency_ms, usage, detail)
		SELECT job_id, id, $2, provider, $3, $4, $5 FROM attempts WHERE id = $1`,
		c.AttemptID, kind, c.LatencyMS, u, detail)
	if err != nil {
		return Offered{}, err
	}
	return Offered{State: attemptState, UsageStored: stored}, nil
}

// notify announces a job's change, with its new state when known, in tx.
func notify(ctx context.Context, tx pgx.Tx, jobID, state string) error {
	payload := jobID
	if state != "" {
		payload += ":" + state
	}
	_, err := tx.Exec(ctx, `SELECT pg_notify($1, $2)`, NotifyChannel, payload)
	return err
}

// rolledBack reports an error after which the database rolled the statement's
// transaction back whole (deadlock, serialization failure), so it can be run again.
func rolledBack(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) &&
		(pgErr.Code == pgerrcode.DeadlockDetected || pgErr.Code == pgerrcode.SerializationFailure)
}
