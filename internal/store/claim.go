package store

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// FirstAttempt is the attempt created in the same commit as its job, so the
// success path needs no commit between the key claim and the provider call.
// It is recorded `running` (the request is sent right after the commit); if
// the process dies before sending, its lease expires and it becomes unknown,
// exactly as an attempt lost after sending would.
type FirstAttempt struct {
	Provider string
	Model    string
	Role     string
	// Price is the target's configured price in this process, stored on the
	// attempt (its cost_usd follows from it); nil: unpriced.
	Price *Price
	// Routing is the job's routing decisions, recorded with it.
	Routing json.RawMessage
	// Lookup records that the attempt's request is sent with the metadata
	// its provider's lookup finds it by (attempts.lookup; NewAttempt.Lookup).
	Lookup bool
}

// JobPlan is what a job's creator prepared before the job exists (the race
// engine's plan): the first attempt to create with it, and a way to give back
// what the plan holds when the job was not created.
type JobPlan interface {
	First() *FirstAttempt // nil: create the job alone
	Discard()
}

// claimRequest is one CreateJob waiting for its batch.
type claimRequest struct {
	nj    NewJob
	jobID string
	attID string
	k     string // key(), made once: batches sort and index their claims by it
	done  chan struct{}

	// Results, set by the batch.
	created    bool
	createdAt  time.Time
	version    int64
	existingID string // the live job holding the key, when not created
	existingFP []byte
	// recovered: created by an earlier try of this claim whose answer was
	// lost; read the job back (its creation time is that try's).
	recovered bool
	// readAgain: a duplicate in its batch whose key's claim (one that may
	// create) found the key claimed by a transaction that committed while the
	// batch ran (no existingID: claimSQL); claimOutcome reads the key again
	// for it, a replay-only duplicate too (finish).
	readAgain bool
	// limited: refused by max_live_jobs in the database (NewJob.MaxLive):
	// nothing was stored (ErrLiveLimit). A settled outcome, not a failure.
	limited bool
	err     error
	// lockWait is the lock wait of the statement whose error err is
	// (batchLockWait in a batch, aloneLockWait alone; batchLockWait for the
	// key's row with the owner's max_live_jobs lock held: claimBatch): a
	// BusyError says it.
	lockWait time.Duration
	// lost: the error of a statement carrying this claim that failed after
	// it may have reached the database (a batch whose answer was lost),
	// whatever the error of the claim's own later retry (runClaims splits a
	// batch); nil when there was none.
	lost error
	// sentAt is this process's clock read as the latest statement carrying
	// the claim was made, just before it was sent (claimStmt); lostSentAt,
	// that of the earliest statement carrying it that may have committed
	// although it failed (markReached; kept across CreateJob's tries). The
	// job's lease, and its first attempt's, were set by one of them: see
	// leaseSentAt.
	sentAt, lostSentAt time.Time
}

// leaseSentAt is when, on this process's clock, the statement that set the
// created job's leases was sent at the latest (Job.LeaseSentAt): the
// earliest try that may have committed the claim — a try whose answer was
// lost may be the one that did, the later try only finding its job — or
// else the try that succeeded.
func (c *claimRequest) leaseSentAt() time.Time {
	if !c.lostSentAt.IsZero() && (c.sentAt.IsZero() || c.lostSentAt.Before(c.sentAt)) {
		return c.lostSentAt
	}
	return c.sentAt
}

// key is the claim's owner, operation and idempotency key, the unique key of
// idempotency_keys, as one string.
func (c *claimRequest) key() string { return c.k }

// claimSQL claims many keys and creates their jobs (and first attempts) in one
// statement. Each key row is inserted, or taken over when its previous job's
// retention has passed; a live key conflicts and creates nothing. The unique
// primary key of idempotency_keys is the guarantee: concurrent claims of one
// key wait for each other and exactly one inserts. Rows are inserted in key
// order, so two batches never wait for each other's keys in opposite orders.
// The final SELECT reads the key rows as they were before the statement, which
// tells a duplicate its job and fingerprint without another round trip. It
// reads only a live key there (not expired at the statement's now()): an
// expired key that the statement did not take over was taken over by a
// concurrent claim, which committed while this statement waited on the row
// and which the statement's snapshot does not show — it still shows the
// expired job. That key, like a key claimed by a transaction that committed
// during the statement, is read afterwards (claimOutcome), so the claim is
// answered with the job that holds the key now, never the expired one.
//
// A replay-only claim (NewJob.ReplayOnly) inserts no key row and takes none
// over: it only reads, in the final SELECT, the job that holds its key live;
// no row there is ErrReplayKeyReleased (claimOutcome), so the claim that let
// it past max_live_jobs can never create a job in the same statement.
//
// A claim with a limit (NewJob.MaxLive) inserts its key row only when
// liveAdmitSQL admits it; the final SELECT evaluates it again (the same
// snapshot: the same answer) for a claim that created nothing and found no
// job on its key, to tell a refusal (limited, ErrLiveLimit) from a key
// claimed by a concurrent transaction. The batch holds its limited owners'
// advisory locks (liveLimitLock). A batch without a limited claim runs
// claimSQL, which has none of it (no limit column, no count, no sub-plan to
// set up); one with a limited claim runs claimLimitedSQL, where an unlimited
// row never runs the count (the CASE's first branch).
var (
	claimSQL        = claimSQLFor(false)
	claimLimitedSQL = claimSQLFor(true)
)

// claimSQLFor is the claim statement, with max_live_jobs's column, check and
// refusal (limited) or without them.
func claimSQLFor(limited bool) string {
	maxLiveArg, maxLiveCol, admit, refused := "", "", "", "false"
	if limited {
		maxLiveArg, maxLiveCol, admit = ", $21::int[]", " max_live,", " AND "+liveAdmitSQL
		refused = `CASE WHEN i.max_live <= 0 OR i.replay_only OR j.id IS NOT NULL OR k.job_id IS NOT NULL THEN false
        ELSE NOT (` + liveAdmitSQL + `) END`
	}
	return `
WITH input AS (
    SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::uuid[], $5::bytea[], $6::text[], $7::text[],
        $8::text[], $9::text[], $10::text[], $11::bigint[], $12::uuid[], $13::text[], $14::text[], $15::text[], $16::text[],
        $17::float8[], $18::float8[], $19::bool[], $20::bool[]` + maxLiveArg + `)
        WITH ORDINALITY AS i(owner, operation, key, job_id, fp, prompt_version, route, input, params,
            lease_owner, lease_ms, attempt_id, provider, model, role, routing, price_in, price_out, replay_only, lookup,` + maxLiveCol + ` ord)
), claim AS (
    INSERT INTO idempotency_keys AS k (owner, operation, idempotency_key, job_id, fingerprint)
    SELECT owner, operation, key, job_id, fp FROM input i WHERE NOT replay_only` + admit + `
    ORDER BY owner, operation, key
    ON CONFLICT (owner, operation, idempotency_key) DO UPDATE
        SET job_id = EXCLUDED.job_id, fingerprint = EXCLUDED.fingerprint,
            created_at = now(), expires_at = NULL
        WHERE k.expires_at IS NOT NULL AND k.expires_at <= now()
    RETURNING job_id
), j AS (
    INSERT INTO jobs (id, owner, operation, idempotency_key, fingerprint, prompt_version, route, input, params,
        state, routing, lease_owner, lease_expires_at)
    SELECT i.job_id, i.owner, i.operation, i.key, i.fp, i.prompt_version, i.route, i.input::jsonb, i.params::jsonb,
        CASE WHEN i.attempt_id IS NULL THEN 'pending' ELSE 'running' END, i.routing::jsonb,
        nullif(i.lease_owner, ''), now() + i.lease_ms * interval '1 millisecond'
    FROM input i JOIN claim c ON c.job_id = i.job_id
    RETURNING id, version, created_at
), a AS (
    INSERT INTO attempts (id, job_id, seq, provider, model, role, state, read_version, lease_owner,
        lease_expires_at, started_at, price_input_per_mtok, price_output_per_mtok, lookup)
    SELECT i.attempt_id, i.job_id, 1, i.provider, i.model, i.role, 'running', j.version, nullif(i.lease_owner, ''),
        now() + i.lease_ms * interval '1 millisecond', now(), i.price_in, i.price_out, i.lookup
    FROM input i JOIN j ON j.id = i.job_id
    WHERE i.attempt_id IS NOT NULL
)
SELECT i.ord, j.id IS NOT NULL, coalesce(j.version, 0), coalesce(j.created_at, now()), k.job_id::text, k.fingerprint,
    ` + refused + `
FROM input i
LEFT JOIN j ON j.id = i.job_id
LEFT JOIN LATERAL (SELECT k.job_id, k.fingerprint FROM idempotency_keys k
    WHERE k.owner = i.owner AND k.operation = i.operation AND k.idempotency_key = i.key
      AND (k.expires_at IS NULL OR k.expires_at > now())) k ON true
ORDER BY i.ord`
}

// CreateJob claims (owner, operation, key) and creates the job, or finds the job
// that already holds the key. created reports which. A live key bound to a
// different fingerprint returns ErrKeyReused and nothing is written. With
// nj.ReplayOnly it only finds the job: a key that holds none (unexpired)
// returns ErrReplayKeyReleased and nothing is written.
//
// Concurrent calls are coalesced into one statement and one commit (see group);
// each caller still learns its own outcome. With nj.First the job's first
// attempt is created in the same commit, `running`, and returned in
// job.Attempts.
func (s *Store) CreateJob(ctx context.Context, nj NewJob) (job *Job, created bool, err error) {
	if err := ctx.Err(); err != nil {
		return nil, false, err
	}
	params := nj.Params
	if len(params) == 0 {
		params = json.RawMessage("{}")
	}
	nj.Params = params
	req := newClaim(nj)
	var lost error // a try's error after which it may have committed (see handOverLostClaim)
	// A key whose row a claim recently found held for longer than its lock
	// waits is claimed alone at once (heldKeys).
	// So is a claim that takes its owner's max_live_jobs lock when a claim
	// recently found that lock held past its waits (heldOwners).
	alone := s.paths.held.has(req.key()) || req.limitLocked() && s.paths.heldOwners.has(req.nj.Owner)
	for try := 0; ; try++ {
		start := commitClock() // the try's own wait: not the failed tries' nor the backoff before it (as a win's)
		if !alone {
			s.paths.enqueue(&pathCommit{claim: req})
			<-req.done
		}
		if alone || Busy(req.err) {
			// The key's row is held by a transaction that outlasted the
			// batch's lock wait (batchLockWait), now or lately (heldKeys),
			// or the owner's max_live_jobs lock is (ErrLiveLimitBusy):
			// the claim waits for it alone, here, up to aloneLockWait,
			// holding up no batch of other callers' claims and wins
			// meanwhile; so do its later tries, if any (see below).
			alone = true
			s.claimAlone(req)
		}
		if req.err == nil {
			s.commitWaited("claim", start)
			break
		}
		switch {
		case lost != nil:
		case req.lost != nil:
			lost = req.lost
		case mayHaveReached(req.err):
			lost = req.err
		}
		if try >= claimTries-1 || !claimUnsettled(req.err) && !(lost != nil && Busy(req.err)) {
			break
		}
		// The batch may have committed the claim although its answer was
		// lost (a dropped connection, a timeout during the commit): run it
		// again, as the same job. Reported failed, a committed job would be
		// left running with its first attempt never sent and nobody
		// orchestrating it until its lease ran out. The claim is safe to run
		// again: it finds its own job if the first try committed (or waits
		// for that try, still in flight, on the key's row), and otherwise
		// claims the key now. Like a win's, it is not given up because its
		// caller went away.
		//
		// A retry whose wait on the key's row ran into the batch's lock wait
		// (Busy) is run again too: the row's holder may be that first try,
		// whose connection was lost while the server was inside its COMMIT
		// (a synchronous replica's acknowledgement, a slow fsync) and which
		// commits later. Taken as settled, its job would land after its
		// caller was told that nothing was stored.
		if !errors.Is(req.err, errClaimNotRun) {
			time.Sleep(time.Duration(50<<try) * time.Millisecond)
		}
		req = req.again()
	}
	if req.err != nil && lost != nil {
		if errors.Is(req.err, errClaimNotRun) {
			// An earlier try may have committed the claim: that its later
			// tries were never run for themselves says nothing of it (not
			// "busy: nothing was stored", which claimOutcome answers for a
			// claim that was never run at all). Reported as the lost answer
			// it is, and handed over below.
			req.err = fmt.Errorf("the outcome of a try whose answer was lost is not known: the later tries were not run "+
				"for themselves (a claim of the key for another request went out for it and failed), after %d tries (%v): %w",
				claimTries, req.err, lost)
		}
		if Busy(req.err) {
			// Still held after every try, maybe by this claim's own first
			// try: its outcome is not known, and "busy: nothing was stored"
			// would be wrong if it commits. Reported as the lost answer it
			// is (the caller sends the request again with the same key and
			// finds the job, if there is one), and handed over below.
			held := "the key's row"
			if errors.Is(req.err, ErrLiveLimitBusy) {
				held = "the owner's max_live_jobs lock"
			}
			req.err = fmt.Errorf("the outcome of a try whose answer was lost is not known: %s was still held "+
				"by a transaction, perhaps that try still committing, after %d tries (%v): %w", held, claimTries, req.err, lost)
		}
		s.lostClaims.Add(1)
		s.startHandOver(req)
	}
	job, created, err = s.claimOutcome(ctx, req)
	if created && job != nil {
		job.LeaseSentAt = req.leaseSentAt()
	}
	return job, created, err
}

// claimTries is how many times CreateJob runs a claim whose outcome is not
// known.
const claimTries = 4

// ErrReplayKeyReleased: a replay-only claim (NewJob.ReplayOnly) found no job
// holding its key when its statement ran — none, or one whose retention had
// passed since the key was looked up — and created nothing: the request is
// not a replay any more, but a new job its caller was not admitted to create.
var ErrReplayKeyReleased = errors.New("the idempotency key holds no job (its retention has passed): a replay-only claim creates nothing")

// ErrUnstorable: the database refused a new job's content (its input, a
// value in it) as data it cannot hold — a number beyond numeric's range, text
// jsonb refuses — and the claim's statement wrote nothing: the key stays free
// for the corrected request. The error (an *UnstorableError) says what
// PostgreSQL refused.
var ErrUnstorable = errors.New("the database cannot store the request's data")

// UnstorableError is ErrUnstorable with PostgreSQL's reason ("value
// overflows numeric format") and SQLSTATE.
type UnstorableError struct {
	Reason string // PostgreSQL's message
	Code   string // its SQLSTATE, class 22 (data exception)
}

func (e *UnstorableError) Error() string {
	return fmt.Sprintf("%v: %s (SQLSTATE %s)", ErrUnstorable, e.Reason, e.Code)
}

// Is makes errors.Is(err, ErrUnstorable) true.
func (e *UnstorableError) Is(target error) bool { return target == ErrUnstorable }

// unstorable is the claim's failure as an *UnstorableError when PostgreSQL
// refused its data: an error of class 22 (data exception) that the server
// reported for the statement (not claimUnsettled), which rolled it back whole:
// no key, job or attempt is left. Only a claim's own data gets there: a batch
// that failed is run again claim by claim (runClaims), so a neighbour's data
// never fails it.
func unstorable(err error) error {
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) || !strings.HasPrefix(pgErr.Code, "22") || claimUnsettled(err) {
		return nil
	}
	return &UnstorableError{Reason: pgErr.Message, Code: pgErr.Code}
}

// keyOf is how a claim's key is named in the store's memories of held rows
// (claimRequest.k, heldKeys): owner, operation and key, NUL-separated.
func keyOf(owner, operation, key string) string {
	return owner + "\x00" + operation + "\x00" + key
}

// errClaimNotRun is the outcome of a claim of a key already in its batch
// whose first claim failed for a request other than its own (another
// fingerprint): its own outcome is not known, and it is run again alone.
var errClaimNotRun = errors.New("claim not run: the batch's claim of its key failed")

// claimUnsettled reports whether a claim that failed with err may have
// committed, or was not run for itself, so that running it again (as the same
// job) is what tells its caller the truth. An error the server reported for
// the statement (severity ERROR) rolled its transaction back: the claim
// certainly left nothing, and it stands. Anything else — the connection lost,
// the batch's time out, a session ended (FATAL) — may have come after the
// commit.
func claimUnsettled(err error) bool {
	if errors.Is(err, errClaimNotRun) {
		return true
	}
	if errors.Is(err, errNoAloneTurn) || errors.Is(err, errFinishHeld) {
		return false // not sent (runAlone), or rolled back (a lock wait that ran out)
	}
	var pgErr *pgconn.PgError
	return !errors.As(err, &pgErr) || pgErr.Severity == "FATAL" || pgErr.Severity == "PANIC"
}

// mayHaveReached reports whether a claim whose batch failed with err may have
// committed: its outcome is unsettled (claimUnsettled), it was run for itself
// (not errClaimNotRun), and the batch was sent (not a connection that failed
// before sending: a refused dial, pgconn.SafeToRetry, or no connection got
// from the pool in time: acquireError — a timeout there is not a timeout of
// the statement, which was never sent).
func mayHaveReached(err error) bool {
	var connectErr *pgconn.ConnectError
	var acquireErr *acquireError
	return claimUnsettled(err) && !errors.Is(err, errClaimNotRun) &&
		!errors.As(err, &connectErr) && !errors.As(err, &acquireErr) && !pgconn.SafeToRetry(err)
}

// again is the claim to run again after its batch failed: the same job (and
// first attempt) ids, so that a try that committed is recognised as its own.
func (c *claimRequest) again() *claimRequest {
	return &claimRequest{nj: c.nj, jobID: c.jobID, attID: c.attID, k: c.k, done: make(chan struct{}), lostSentAt: c.lostSentAt}
}

func newClaim(nj NewJob) *claimRequest {
	req := &claimRequest{nj: nj, jobID: newID().String(), done: make(chan struct{}),
		k: keyOf(nj.Owner, nj.Operation, nj.IdempotencyKey)}
	if nj.First != nil {
		req.attID = newID().String()
	}
	return req
}

// claimOutcome is what a claim's batch means for its caller: the new job, the
// existing one, or ErrKeyReused.
func (s *Store) claimOutcome(ctx context.Context, req *claimRequest) (job *Job, created bool, err error) {
	nj := req.nj
	if req.err != nil {
		if u := unstorable(req.err); u != nil {
			return nil, false, u
		}
		if be := liveLimitBusy(req.err, nj.Owner); be != nil {
			// Not the key's row: the owner's max_live_jobs lock, held by
			// another transaction past the claim's wait for it.
			return nil, false, be
		}
		if errors.Is(req.err, errClaimNotRun) {
			// On every try a claim of the key for another request (another
			// fingerprint) went out for it in its batch and failed for its
			// own reasons; this claim was never run for itself, and no try
			// of it may have committed (CreateJob reports one that may
			// have otherwise): nothing of it was stored. Busy, as the key's
			// row held by that other request is: the same request sent
			// again shortly, with the same key, is run on its own.
			return nil, false, &BusyError{Err: req.err, What: fmt.Sprintf("Idempotency-Key %q of operation %q "+
				"(claimed ahead of this request, on each of its %d tries, by a concurrent request of the key with another body, "+
				"whose claim failed)", nj.IdempotencyKey, nj.Operation, claimTries)}
		}
		if Busy(req.err) {
			// The key's row is held by a transaction that outlasted the
			// claim's lock wait (batchSettingsSQL; CreateJob waits
			// aloneLockWait for it, after its batch's batchLockWait): the
			// claim's statement was cancelled and wrote nothing. Not run
			// again: the holder may keep it for long. (Unless an earlier try
			// of the claim may be the holder: CreateJob.)
			wait := req.lockWait
			if wait == 0 {
				wait = batchLockWait
			}
			return nil, false, &BusyError{Wait: wait, Err: req.err,
				What: fmt.Sprintf("Idempotency-Key %q of operation %q", nj.IdempotencyKey, nj.Operation)}
		}
		return nil, false, fmt.Errorf("claim idempotency key: %w", req.err)
	}
	if req.limited {
		return nil, false, &LiveLimitError{Owner: nj.Owner, Limit: nj.MaxLive}
	}
	if req.created {
		if req.recovered {
			return s.recoveredJob(ctx, req), true, nil
		}
		return req.newJob(), true, nil
	}
	jobID, fp := req.existingID, req.existingFP
	if jobID == "" && nj.ReplayOnly && !req.readAgain {
		// No job held the key, unexpired, when the statement ran (a
		// replay-only claim waits on no row and sees every commit before
		// it): nothing was created, and reading the key again could only
		// find the expired job or a newer one. (A replay-only duplicate of a
		// claim that waited on the key row reads it again: readAgain.)
		return nil, false, ErrReplayKeyReleased
	}
	if jobID == "" {
		// The key was claimed, or its expired row taken over, by a
		// transaction that committed while the batch ran (claimSQL): read it
		// now. A replay-only claim (a duplicate whose key's claim waited on
		// that transaction: readAgain) reads only a live key, and is told
		// ErrReplayKeyReleased when there is none; it still writes nothing.
		// Without the caller's cancellation: an earlier try of this claim
		// may have committed, and the job it made is this caller's to run.
		// But within settleWait: a connection gone silent must not hold the
		// caller for ever.
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.settleWait)
		err = s.pool.QueryRow(rctx, `SELECT job_id::text, fingerprint FROM idempotency_keys
			WHERE owner = $1 AND operation = $2 AND idempotency_key = $3
			  AND (NOT $4 OR expires_at IS NULL OR expires_at > now())`,
			nj.Owner, nj.Operation, nj.IdempotencyKey, nj.ReplayOnly).Scan(&jobID, &fp)
		cancel()
		if nj.ReplayOnly && errors.Is(err, pgx.ErrNoRows) {
			return nil, false, ErrReplayKeyReleased
		}
		if err != nil {
			return nil, false, fmt.Errorf("read idempotency key: %w", notFound(err))
		}
	}
	if jobID == req.jobID {
		// The key is held by an earlier try of this very claim, whose answer
		// was lost: the job is this caller's. Also when this try ran in a
		// batch behind a resent copy of the request, which found the key
		// first and reported it to this try as the key's holder.
		return s.recoveredJob(ctx, req), true, nil
	}
	if !bytes.Equal(fp, nj.Fingerprint) {
		return nil, false, ErrKeyReused
	}
	job, err = s.GetJob(ctx, nj.Owner, jobID)
	return job, false, err
}

// recoveredJob is the job of a claim that an earlier try committed although
// its answer was lost, as stored (its creation time is that try's, which the
// batch that found it does not return); as the claim inserted it when it
// cannot be read.
func (s *Store) recoveredJob(ctx context.Context, req *claimRequest) *Job {
	j, err := s.GetJob(ctx, req.nj.Owner, req.jobID)
	if err != nil {
		return req.newJob()
	}
	j.HeldBy = req.nj.LeaseOwner // the claim took the job's lease
	return j
}

// newJob is the job as the batch inserted it, without reading it back.
func (c *claimRequest) newJob() *Job {
	nj := c.nj
	j := &Job{ID: c.jobID, Owner: nj.Owner, Operation: nj.Operation, IdempotencyKey: nj.IdempotencyKey,
		PromptVersion: nj.PromptVersion, Route: nj.Route, Input: nj.Input, Params: nj.Params,
		State: JobPending, Version: c.version, CreatedAt: c.createdAt, UpdatedAt: c.createdAt,
		Attempts: []Attempt{}, RaceEvents: []RaceEvent{}, fingerprint: nj.Fingerprint, HeldBy: nj.LeaseOwner}
	if f := nj.First; f != nil {
		j.State = JobRunning
		j.Routing = f.Routing
		started := c.createdAt
		owner := nj.LeaseOwner
		j.Attempts = []Attempt{{ID: c.attID, JobID: c.jobID, Seq: 1, Provider: f.Provider, Model: f.Model, Role: f.Role,
			State: AttemptRunning, ReadVersion: c.version, CreatedAt: c.createdAt, StartedAt: &started, LeaseOwner: &owner}}
	}
	return j
}

// execClaims runs one batch of claims. Requests for the same key within the
// batch go out once; the others learn the first one's job as an existing one.
func (s *Store) execClaims(ctx context.Context, batch []*claimRequest) {
	cb := groupClaims(batch)
	s.runClaims(ctx, cb.firsts, batchLockWait)
	cb.finish()
}

// runClaims executes claims as one statement, retrying a batch the database
// rolled back whole; on any other error each claim is tried alone, so one bad
// request cannot fail its neighbours (splitClaims).
func (s *Store) runClaims(ctx context.Context, cs []*claimRequest, lockWait time.Duration) {
	err := retryRolledBack(func() error { return s.claimBatch(ctx, cs, lockWait) })
	if err == nil {
		s.committed("claim", len(cs))
		if s.afterClaimCommit != nil {
			s.afterClaimCommit(cs[0].nj.IdempotencyKey)
		}
		return
	}
	markReached(cs, err)
	if len(cs) == 1 {
		failClaims(cs, err, lockWait)
		return
	}
	s.splitClaims(ctx, cs, err, lockWait)
}

// failClaims gives each claim of cs err, the error of the statement that
// carried them, and its lock wait.
func failClaims(cs []*claimRequest, err error, lockWait time.Duration) {
	for _, c := range cs {
		c.err, c.lockWait = err, lockWait
		if c.limitLocked() {
			c.lockWait = min(lockWait, batchLockWait) // its key row's wait (claimBatch)
		}
	}
}

// splitClaims runs again the claims cs of a statement that failed with err
// (markReached already told), so that the claim to blame fails alone and the
// others commit: each on its own, as which claim failed it is not known —
// except when err is the wait for a max_live_jobs lock (ErrLiveLimitBusy),
// which the statement took for its limited owners before any row
// (liveLimitLock). Every claim of the owner whose lock is held would meet it
// again, one batchLockWait after the other, and the claims taking no such
// lock would wait for them all: those go together, and each limited owner's
// claims together; when the statement locked one owner only, that owner's
// lock is the one held, and its claims fail at once with err (their callers
// run them alone: CreateJob). One more wait per held owner, not per claim.
func (s *Store) splitClaims(ctx context.Context, cs []*claimRequest, err error, lockWait time.Duration) {
	if !errors.Is(err, ErrLiveLimitBusy) {
		for _, c := range cs {
			s.runClaims(ctx, []*claimRequest{c}, lockWait)
		}
		return
	}
	free, owners := byLimitOwner(cs)
	if len(free) > 0 {
		s.runClaims(ctx, free, lockWait)
	}
	if len(owners) == 1 {
		failClaims(owners[0], err, lockWait)
		return
	}
	for _, oc := range owners {
		s.runClaims(ctx, oc, lockWait)
	}
}

// byLimitOwner splits cs into the claims that take no max_live_jobs lock
// (limitLocked) and, for each owner whose lock the others take, its claims,
// each in cs's order (the lock order of their keys).
func byLimitOwner(cs []*claimRequest) (free []*claimRequest, owners [][]*claimRequest) {
	at := map[string]int{}
	for _, c := range cs {
		if !c.limitLocked() {
			free = append(free, c)
			continue
		}
		i, ok := at[c.nj.Owner]
		if !ok {
			i = len(owners)
			at[c.nj.Owner] = i
			owners = append(owners, nil)
		}
		owners[i] = append(owners[i], c)
	}
	return free, owners
}

// claimAlone runs one claim in a statement and transaction of its own, on the
// caller's goroutine, outside the shared batches, waiting for its key's row up
// to aloneLockWait (see CreateJob). The claim is run again as it is: a claim
// whose statement failed wrote nothing, or, when the failure came after it
// may have committed, finds its own job (mayHaveReached, markReached).
//
// A claim that takes its owner's max_live_jobs lock (limitLocked) waits for
// its key's row first, in a transaction of its own that holds no lock of the
// owner (awaitKeyRow), and then runs waiting up to aloneLockWait for the
// owner's lock but only batchLockWait for the row (claimBatch): held through
// a long wait for the row, the lock would stall every other creation of the
// owner, and the batches carrying them, for as long as a client resent a
// request whose key's row another transaction holds.
//
// It runs on a context of its own, not its caller's: given up mid-statement,
// pgx drops the connection and cannot tell whether the claim committed, which
// makes it a claim whose answer was lost (mayHaveReached). A caller that went
// away keeps a pool connection at most aloneLockWait longer (twice, with a
// limit).
func (s *Store) claimAlone(req *claimRequest) {
	// What sent the claim alone, should it get no turn: its owner's
	// max_live_jobs lock (its batch's error says so, or the owner is
	// remembered held and its key is not), or else its key's row.
	ownerHeld := errors.Is(req.err, ErrLiveLimitBusy) ||
		req.err == nil && req.limitLocked() && s.paths.heldOwners.has(req.nj.Owner) && !s.paths.held.has(req.key())
	err := s.runAlone(context.Background(), &s.alone, s.paths.onAlone, func(ctx context.Context, wait time.Duration) {
		req.err, req.lockWait = nil, 0
		if req.limitLocked() {
			// Any other error of the wait wrote nothing either: the claim
			// runs and meets it itself, and is answered as its own.
			if err := s.awaitKeyRow(ctx, req.nj, wait); Busy(err) {
				req.err, req.lockWait = err, wait
				return
			}
		}
		s.runClaims(ctx, []*claimRequest{req}, wait)
	})
	if err != nil {
		// No turn: nothing was sent, and what is held is not known to have
		// changed. Answered busy, as the row still held; neither memory is
		// touched (the claim learnt nothing new).
		req.lockWait = aloneLockWait()
		req.err = err
		if ownerHeld {
			req.err = &liveLimitBusyError{wait: req.lockWait, err: err}
		}
		return
	}
	switch {
	case errors.Is(req.err, ErrLiveLimitBusy):
		s.paths.heldOwners.mark(req.nj.Owner)
	case Busy(req.err):
		s.paths.held.mark(req.key())
	case req.err == nil:
		s.paths.held.forget(req.key())
		if req.limitLocked() {
			s.paths.heldOwners.forget(req.nj.Owner)
		}
	}
}

// claimBatch runs the claims cs in one transaction, waiting up to lockWait
// for a lock. With their owners' max_live_jobs locks held (liveLimitLock), a
// key row is waited for at most batchLockWait: a claim run alone (claimAlone)
// waits longer for the owners' locks, while it holds nothing, than for its
// key's row while it holds them.
func (s *Store) claimBatch(ctx context.Context, cs []*claimRequest, lockWait time.Duration) error {
	st := claimStmt(cs)
	if st.before != "" && lockWait > batchLockWait {
		st.rowWait = batchLockWait
	}
	return s.queryBatched(ctx, lockWait, st)
}

// claimStmt is the claim statement for cs, whose rows set each claim's outcome.
// It is made just before it is sent (queryBatched takes a connection and
// sends it): the time read here (each claim's sentAt) is never after the
// statement's now(), which sets the leases.
func claimStmt(cs []*claimRequest) batchedStmt {
	n := len(cs)
	sentAt := time.Now()
	for _, c := range cs {
		c.created, c.existingID, c.existingFP, c.recovered, c.limited = false, "", nil, false, false
		c.sentAt = sentAt
	}
	var (
		owners, ops, keys, jobIDs, pvs, routes, inputs, params, leaseOwners = make([]string, n), make([]string, n),
			make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n)
		fps                                 = make([][]byte, n)
		leaseMS                             = make([]int64, n)
		attIDs, provs, models, roles, routs = make([]*string, n), make([]*string, n), make([]*string, n), make([]*string, n), make([]*string, n)
		priceIns, priceOuts                 = make([]*float64, n), make([]*float64, n)
		replayOnly, lookups                 = make([]bool, n), make([]bool, n)
		maxLive                             = make([]int32, n)
	)
	for i, c := range cs {
		nj := c.nj
		owners[i], ops[i], keys[i], jobIDs[i], fps[i] = nj.Owner, nj.Operation, nj.IdempotencyKey, c.jobID, nj.Fingerprint
		pvs[i], routes[i], inputs[i], params[i], leaseOwners[i] = nj.PromptVersion, nj.Route, string(nj.Input), string(nj.Params), nj.LeaseOwner
		leaseMS[i], replayOnly[i], maxLive[i] = nj.LeaseFor.Milliseconds(), nj.ReplayOnly, int32(max(0, min(nj.MaxLive, 1<<31-1)))
		if leaseMS[i] <= 0 {
			leaseMS[i] = (30 * time.Second).Milliseconds()
		}
		if f := nj.First; f != nil {
			attIDs[i], provs[i], models[i], roles[i] = &c.attID, &f.Provider, &f.Model, &f.Role
			if len(f.Routing) > 0 {
				r := string(f.Routing)
				routs[i] = &r
			}
			priceIns[i], priceOuts[i] = f.Price.parts()
			lookups[i] = f.Lookup
		}
	}
	each := func(rows pgx.Rows) error {
		var (
			ord        int
			created    bool
			version    int64
			createdAt  time.Time
			existingID *string
			existingFP []byte
			limited    bool
		)
		if err := rows.Scan(&ord, &created, &version, &createdAt, &existingID, &existingFP, &limited); err != nil {
			return err
		}
		if ord < 1 || ord > n {
			return errors.New("claim batch: row out of range")
		}
		c := cs[ord-1]
		c.created, c.version, c.createdAt, c.limited = created, version, createdAt, limited
		switch {
		case !created && existingID != nil && *existingID == c.jobID:
			// An earlier try of this batch, or of this claim (CreateJob),
			// committed although its answer was lost (a dropped connection):
			// the job is ours, as inserted (read back: see recoveredJob).
			c.created, c.version, c.recovered = true, 1, true
		case !created && existingID != nil:
			c.existingID, c.existingFP = *existingID, existingFP
		}
		return nil
	}
	args := []any{owners, ops, keys, jobIDs, fps, pvs, routes, inputs, params,
		leaseOwners, leaseMS, attIDs, provs, models, roles, routs, priceIns, priceOuts, replayOnly, lookups}
	lockSQL, lockArgs := liveLimitLock(cs)
	if lockSQL == "" {
		return batchedStmt{sql: claimSQL, each: each, args: args}
	}
	return batchedStmt{sql: claimLimitedSQL, each: each, args: append(args, maxLive), before: lockSQL, beforeArgs: lockArgs}
}

// retryRolledBack runs fn again (up to three times) when its statement
// certainly left nothing behind: the database rolled it back whole (deadlock,
// serialization failure), or it never reached the server (pgconn.SafeToRetry:
// a connection that failed before sending). Running it again is then safe.
func retryRolledBack(fn func() error) error {
	var err error
	for try := 0; try < 4; try++ {
		if err = fn(); err == nil || !(rolledBack(err) || pgconn.SafeToRetry(err)) {
			return err
		}
	}
	return err
}

// markReached records on each claim of a failed statement that it may have
// committed (mayHaveReached), and when that statement was sent (lostSentAt:
// the earliest such), before the claims are retried on their own.
func markReached(cs []*claimRequest, err error) {
	if mayHaveReached(err) {
		for _, c := range cs {
			if c.lost == nil {
				c.lost = err
			}
			if c.lostSentAt.IsZero() || c.sentAt.Before(c.lostSentAt) {
				c.lostSentAt = c.sentAt
			}
		}
	}
}
