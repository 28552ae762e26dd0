package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/routerhq/router/internal/jsontext"
)

const attemptColumns = `a.id::text, a.job_id::text, a.seq, a.provider, a.model, a.response_model, a.role, a.state,
	a.read_version, a.created_at, a.started_at, a.finished_at, a.latency_ms, a.usage, a.provider_response_id,
	a.error, a.validation_errors, a.lease_owner, a.lease_expires_at, a.cost_usd::float8`

func scanAttemptRow(r pgx.CollectableRow) (Attempt, error) {
	var a Attempt
	err := r.Scan(a.dest()...)
	return a, err
}

// dest is where a row of attemptColumns (in that order) is scanned to.
func (a *Attempt) dest() []any {
	return []any{&a.ID, &a.JobID, &a.Seq, &a.Provider, &a.Model, &a.ResponseModel, &a.Role, &a.State,
		&a.ReadVersion, &a.CreatedAt, &a.StartedAt, &a.FinishedAt, &a.LatencyMS, rawJSON(&a.Usage), &a.ProviderResponseID,
		rawJSON(&a.Error), rawJSON(&a.ValidationErrors), &a.LeaseOwner, &a.LeaseExpiresAt, &a.CostUSD}
}

// NewAttempt describes an attempt to create.
type NewAttempt struct {
	// ID is the attempt's id, chosen by the caller (NewAttemptID) so that it
	// can find the attempt again when the creation's answer is lost
	// (AbandonAttempt); empty: CreateAttempt chooses one.
	ID       string
	JobID    string
	Provider string
	Model    string
	Role     string
	// Price is the target's configured price in this process, stored on the
	// attempt (its cost_usd follows from it); nil: unpriced.
	Price *Price
	// LeaseOwner names the router process that runs the attempt; LeaseFor is how
	// long its lease lasts before it must be renewed.
	LeaseOwner  string
	LeaseFor    time.Duration
	MaxInflight int // 0 = no bound
	MaxAttempts int // 0 = no bound (counted since the caller's last retry)
	// Orchestrator, when set, must hold the job's orchestration lease: a process
	// whose lease was taken over can no longer add attempts (fencing).
	Orchestrator string
	// Routing, when set, is recorded as the job's routing decisions in the same
	// statement.
	Routing []byte
	// Lookup records that the attempt's request is sent with the metadata
	// its provider's lookup finds it by (attempts.lookup; the target's
	// provider has a lookup: providers.LookerOf). Reconciliation trusts a
	// lookup's "no record" only for such an attempt.
	Lookup bool
}

// CreateAttempt adds an attempt to a job, enforcing in the database, under the
// job row's lock: the blocking rule (no sibling `starting` or `unknown`), the
// in-flight and total bounds, and that the job can still take attempts. A pending
// job becomes running. The attempt starts `starting` and reads the job's version.
//
// The job's row is waited for up to transitionLockWait: a row another
// transaction holds for longer is ErrBusy (a *BusyError naming the job), and
// no attempt is created. Before, a hedge, failover or retry waited for it as
// long as it was held, and its job's orchestration with it.
func (s *Store) CreateAttempt(ctx context.Context, na NewAttempt) (*Attempt, error) {
	a, _, err := s.CreateAttemptCounted(ctx, na)
	return a, err
}

// CreateAttemptCounted is CreateAttempt that also says how many of the
// round's attempts count against max_attempts once this one is created
// (made): the count it compared with na.MaxAttempts, plus the new attempt —
// attempts never sent and those their provider provably never worked on
// excluded, as there. It lets the caller, which alone adds attempts while it
// holds the job's lease (na.Orchestrator), know when the limit is spent
// without asking again. 0 with an error.
func (s *Store) CreateAttemptCounted(ctx context.Context, na NewAttempt) (*Attempt, int, error) {
	id := na.ID
	if id == "" {
		id = NewAttemptID()
	} else if !canonicalUUID(id) {
		return nil, 0, fmt.Errorf("attempt id %q is not a canonical UUID", id)
	}
	var a *Attempt
	var made int
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		a, made = nil, 0 // a retried transaction's
		var state string
		var version int64
		var base int
		var leaseOwner *string
		// Lock the job row first: every change of a job's attempts serialises here,
		// and the statements below read with a snapshot taken after the lock. The
		// lock wait's bound goes in the same round trip as the lock.
		err := lockWaitQueryRow(ctx, tx, transitionLockWait,
			`SELECT state, version, attempt_base, lease_owner FROM jobs WHERE id = $1 FOR UPDATE`, na.JobID).
			Scan(&state, &version, &base, &leaseOwner)
		if err != nil {
			return notFound(err)
		}
		if na.Orchestrator != "" && leaseOwner == nil {
			// Released: the job went unknown (recovery), or back to running
			// with no owner (a resolution), and whoever runs it next takes it.
			return fmt.Errorf("%w: this process no longer holds the job's lease: nobody does (released when the job went unknown)", ErrLeaseLost)
		}
		if na.Orchestrator != "" && *leaseOwner != na.Orchestrator {
			return fmt.Errorf("%w: this process no longer holds the job's lease: another process took it", ErrLeaseLost)
		}
		switch state {
		case JobSucceeded, JobCancelled, JobFailed:
			return fmt.Errorf("%w: job is %s", ErrJobFinished, state)
		case JobUnknown:
			return fmt.Errorf("%w: job is unknown", ErrAttemptBlocked)
		}
		var blocked, inflight, total, maxSeq int
		// Attempts never sent (cancelled as not_sent: the router stopped
		// between creating and sending them) do not count against
		// max_attempts, nor do those its provider provably never worked on
		// (Unworked: cut short by their router's death or stop, and found
		// by reconciliation's lookup to have reached nobody).
		err = tx.QueryRow(ctx, `SELECT
				count(*) FILTER (WHERE state IN ('starting', 'unknown')),
				count(*) FILTER (WHERE state IN ('starting', 'running')),
				count(*) FILTER (WHERE seq > $2 AND NOT (state = 'cancelled' AND coalesce(error->>'kind', '') = $3)
					AND NOT `+unworkedSQL+`),
				coalesce(max(seq), 0)
			FROM attempts WHERE job_id = $1`, na.JobID, base, notSentKind).Scan(&blocked, &inflight, &total, &maxSeq)
		if err != nil {
			return err
		}
		if blocked > 0 {
			return ErrAttemptBlocked
		}
		if na.MaxInflight > 0 && inflight >= na.MaxInflight {
			return fmt.Errorf("%w: %d attempts in flight (max_inflight %d)", ErrInflightLimit, inflight, na.MaxInflight)
		}
		if na.MaxAttempts > 0 && total >= na.MaxAttempts {
			return AttemptLimitError(total, na.MaxAttempts)
		}
		priceIn, priceOut := na.Price.parts()
		lease := na.LeaseFor
		if lease <= 0 {
			lease = 30 * time.Second
		}
		// A pending job becomes running in the same statement; the attempt reads
		// the version after that change.
		rows, err := tx.Query(ctx, `WITH j AS (
				UPDATE jobs SET routing = coalesce($10::jsonb, routing), state = 'running',
					version = CASE WHEN state = 'pending' THEN version + 1 ELSE version END,
					updated_at = CASE WHEN state = 'pending' THEN now() ELSE updated_at END
				WHERE id = $2 AND (state = 'pending' OR $10::jsonb IS NOT NULL)
				RETURNING version)
			INSERT INTO attempts AS a (id, job_id, seq, provider, model, role, read_version,
				lease_owner, lease_expires_at, price_input_per_mtok, price_output_per_mtok, lookup)
			VALUES ($1, $2, $3, $4, $5, $6, coalesce((SELECT version FROM j), $7), $8, now() + $9::interval, $11::float8, $12::float8, $13)
			RETURNING `+attemptColumns,
			id, na.JobID, maxSeq+1, na.Provider, na.Model, na.Role, version, na.LeaseOwner, lease, routingOrNil(na.Routing),
			priceIn, priceOut, na.Lookup)
		if err != nil {
			return err
		}
		got, err := pgx.CollectExactlyOneRow(rows, scanAttemptRow)
		if err != nil {
			return err
		}
		a, made = &got, total+1
		return nil
	})
	if err != nil {
		return nil, 0, jobBusy(err, na.JobID, transitionLockWait)
	}
	if f := s.afterCreateAttempt.Load(); f != nil {
		if err := (*f)(a); err != nil {
			return nil, 0, err
		}
	}
	return a, made, nil
}

// AttemptLimitError is CreateAttempt's refusal at max_attempts: made attempts
// of the round count against max_attempts limit (ErrAttemptLimit).
func AttemptLimitError(made, limit int) error {
	return fmt.Errorf("%w: %d attempts made (max_attempts %d)", ErrAttemptLimit, made, limit)
}

// NewAttemptID is the id of a new attempt (a version 7 UUID, as CreateAttempt
// would choose), for a caller that names its attempt before creating it
// (NewAttempt.ID).
func NewAttemptID() string { return newID().String() }

// SetAfterCreateAttempt installs, for tests only, a hook run after each
// CreateAttempt's transaction committed and before its caller is told: an
// error it returns is CreateAttempt's, as when the answer to a COMMIT that
// took effect was lost (a context cut, a connection dropped). nil removes it.
func (s *Store) SetAfterCreateAttempt(f func(a *Attempt) error) {
	if f == nil {
		s.afterCreateAttempt.Store(nil)
		return
	}
	s.afterCreateAttempt.Store(&f)
}

// AbandonAttempt settles an attempt whose creation's answer was lost (the
// call returned an error that says nothing of what the database did: a
// context cut while its COMMIT was in flight, a dropped connection): if it
// exists and is still `starting`, it was never sent, and it is recorded as
// RecordNotSent records one — `cancelled`, kind not_sent, why as its message
// — so that it neither blocks its job nor counts against max_attempts. found
// says whether it was.
//
// One transaction that locks the job's row first: a creation whose COMMIT is
// still in flight holds that lock, so this waits for it and then sees the
// attempt if it committed. The row is waited for up to exitLockWait (ErrBusy
// past it: the attempt, if any, is left to its lease). A database that does
// not answer is tried again for up to notSentRetryFor (a run's ending write;
// RecordNotSent retries longer, unsentRetryFor).
func (s *Store) AbandonAttempt(ctx context.Context, jobID, attemptID, why string) (found bool, err error) {
	err = writeWhileUnreachable(ctx, notSentRetryFor, func(ctx context.Context) error {
		f, err := s.abandonAttempt(ctx, jobID, attemptID, why)
		found = found || f
		return err
	})
	return found, err
}

func (s *Store) abandonAttempt(ctx context.Context, jobID, attemptID, why string) (found bool, err error) {
	err = s.inTx(ctx, func(tx pgx.Tx) error {
		if _, _, err := lockJobWaiting(ctx, tx, jobID, "", exitLockWait); err != nil {
			return err // ErrNotFound: no job, so no attempt of it either
		}
		tag, err := tx.Exec(ctx, `UPDATE attempts SET state = 'cancelled', error = $3,
				finished_at = now(), lease_owner = NULL, lease_expires_at = NULL
			WHERE id = $1 AND job_id = $2 AND state = 'starting'`,
			attemptID, jobID, jsonOrNil(notSentError(why)))
		found = err == nil && tag.RowsAffected() > 0
		return err
	})
	if errors.Is(err, ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, exitBusy(err, jobID)
	}
	return found, nil
}

// MarkAttemptRunning records that the request is about to be sent: the attempt
// leaves `starting`, so it no longer blocks hedges.
//
// An attempt whose job has ended (succeeded, cancelled, failed) is not sent:
// it is recorded as never sent (cancelled, kind not_sent, as RecordNotSent
// records one) and the answer is ErrStateConflict, as for an attempt no
// longer starting. The job's end usually settles its starting attempts itself
// (settleSiblingsSQL, CancelJob), but a win whose statement took its snapshot
// while the attempt's creation held the job's row does not see it: the
// attempt would otherwise be sent, and billed, after its job had succeeded.
// The job's row is read, not locked (an ended job never changes again); a
// win that commits after this statement's snapshot finds the attempt
// running, in flight like any other loser (SPEC §6.6).
func (s *Store) MarkAttemptRunning(ctx context.Context, attemptID string) error {
	return s.MarkAttemptRunningFor(ctx, attemptID, 0)
}

// MarkAttemptRunningFor is MarkAttemptRunning that also renews the attempt's
// lease, in the same statement: it then runs out no sooner than lease after
// the statement was sent (never sooner than it did). The caller, about to
// send the request, reads its clock just before the call and knows the lease
// holds until then plus lease, whatever it waited for before (the job's row
// for the attempt's creation, its own stall). lease 0 leaves the lease as it
// is.
//
// The attempt's row (and its table) is waited for up to transitionLockWait,
// as the job's other transitions wait: a lock another transaction holds for
// longer (an operator's open transaction, a DDL statement) fails the mark
// (Busy), nothing changed, rather than hold the caller, about to send, for as
// long as it lasts.
func (s *Store) MarkAttemptRunningFor(ctx context.Context, attemptID string, lease time.Duration) error {
	tag, err := s.execLazyWaiting(ctx, transitionLockWait, markRunningSQL, attemptID, lease)
	if err != nil {
		return err
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("%w: attempt %s is not starting, or its job has ended", ErrStateConflict, attemptID)
	}
	return nil
}

// markRunningSQL is MarkAttemptRunning's one statement: the attempt ($1), if
// still starting, becomes running, its lease renewed for $2 from now() unless
// $2 is zero, or, when its job has ended, cancelled as never sent. It returns
// one row when it became running, none otherwise.
const markRunningSQL = `WITH x AS (
		UPDATE attempts a SET
			state = CASE WHEN j.ended THEN 'cancelled' ELSE 'running' END,
			started_at = CASE WHEN j.ended THEN a.started_at ELSE now() END,
			error = CASE WHEN j.ended THEN jsonb_build_object('kind', '` + notSentKind + `', 'fault', 'router',
				'message', 'the request was never sent: its job had ended (' || j.state || ') before it could be') ELSE a.error END,
			finished_at = CASE WHEN j.ended THEN now() ELSE a.finished_at END,
			lease_owner = CASE WHEN j.ended THEN NULL ELSE a.lease_owner END,
			lease_expires_at = CASE WHEN j.ended THEN NULL
				WHEN $2::interval > interval '0' THEN greatest(a.lease_expires_at, now() + $2::interval)
				ELSE a.lease_expires_at END
		FROM (SELECT id, state, state IN ('succeeded', 'cancelled', 'failed') AS ended FROM jobs) j
		WHERE a.id = $1 AND j.id = a.job_id AND a.state = 'starting'
		RETURNING a.state
	)
	SELECT 1 FROM x WHERE state = 'running'`

// AttemptOutcome is what a finished attempt reports.
type AttemptOutcome struct {
	State              string // failed, invalid, unknown, cancelled
	Error              any    // JSON-encodable error detail
	ValidationErrors   any    // JSON-encodable violations (invalid)
	Usage              any
	ProviderResponseID string
	ResponseModel      string
	LatencyMS          int64
}

// unknownUnlessEndedSQL is the state an attempt whose outcome is unknown is
// recorded in, given its job (alias j, locked): `unknown` while the job can
// still depend on it; once the job has ended, the state the job's end gives
// its attempts, since the attempt can no longer change the job (its
// read_version predates the end's version bump, so it can never win) and
// nothing would settle it afterwards (reconciliation reads only running and
// unknown jobs). A succeeded job's: `lost`, as the win settles an unknown
// sibling (casSQL, winSQL), with a race event (lostEventSQL). A cancelled
// job's: `cancelled`, as CancelJob cancels attempts in flight or unknown. A
// failed job's: `cancelled` too, as the router cancels what is still in
// flight when a job ends (SPEC §6.6); a failed job cannot have one (SettleJob
// fails a job only with none in flight, under the lock CreateAttempt takes),
// and an `unknown` attempt on it would contradict `failed` (SPEC §3) and
// leave its retry blocked behind an attempt that can change nothing.
const unknownUnlessEndedSQL = `CASE j.state WHEN 'succeeded' THEN 'lost' WHEN 'cancelled' THEN 'cancelled'
	WHEN 'failed' THEN 'cancelled' ELSE 'unknown' END`

// lostEventSQL records the race event of each attempt that an update (the
// CTE x, with columns id, job_id, provider and state) settled as lost
// because its job had already succeeded (unknownUnlessEndedSQL).
const lostEventSQL = `INSERT INTO race_events (job_id, attempt_id, kind, provider, detail)
	SELECT job_id, id, 'lost', provider, 'attempt with an unknown outcome settled as lost: another attempt had already won'
	FROM x WHERE state = 'lost'`

// FinishAttempt records a non-winning end of an in-flight attempt. It changes
// only an attempt that is still starting or running (a cancelled job's attempts
// stay cancelled); ErrStateConflict says it was not. It takes the job row's lock
// first, like CreateAttempt: an attempt that becomes unknown and a sibling being
// created are serialised, so the blocking rule holds at every commit. An
// unknown end on a job that has already ended (a loser kept running after the
// win) is recorded as the job's end settles its attempts (unknownUnlessEndedSQL).
//
// The job's row and the attempt's are waited for up to transitionLockWait: a
// row another transaction holds for longer rolls the try back, and it is
// tried again, as is a try the database did not answer, for up to
// finishRetryFor (writeWhileUnreachable): an attempt's end is what takes it
// out of flight, and one left unwritten is settled only by its lease's
// expiry, as unknown. Past it the error is ErrBusy (a *BusyError naming the
// job) or the database's, nothing is recorded, and the attempt is left to
// its lease.
func (s *Store) FinishAttempt(ctx context.Context, attemptID string, out AttemptOutcome) error {
	_, err := s.FinishAttemptAs(ctx, attemptID, out)
	return err
}

// FinishAttemptAs is FinishAttempt, and says which state it stored: out.State,
// except for an unknown end on a job that had already ended (lost or
// cancelled, unknownUnlessEndedSQL), so that the race counts what is stored.
// The state comes back from the update itself: no extra round trip. After a
// try whose answer was lost, an attempt found no longer in flight is taken as
// that try's record (out.State; RecordNotSent reads a conflict so too).
func (s *Store) FinishAttemptAs(ctx context.Context, attemptID string, out AttemptOutcome) (stored string, err error) {
	var held error // the latest try's lock wait that ran out (ErrBusy)
	err = writeWhileUnreachable(ctx, finishRetryFor, func(ctx context.Context) error {
		var err error
		stored, err = s.finishAttemptAs(ctx, attemptID, out)
		if held = nil; Busy(err) {
			held = err
			return errFinishHeld
		}
		return err
	}, ErrStateConflict)
	switch {
	case held != nil:
		return "", held
	case err != nil:
		return "", err
	case stored == "":
		return out.State, nil // a conflict after a lost answer: that try's record
	}
	return stored, nil
}

// finishRetryFor bounds how long FinishAttemptAs tries an attempt's end again
// while its rows are held past the lock wait or the database does not answer,
// as a run's other ending writes are (notSentRetryFor).
const finishRetryFor = notSentRetryFor

// errFinishHeld is a try that ran into its lock wait on a row another
// transaction holds: it wrote nothing (its transaction rolled back), and
// writeWhileUnreachable, which takes it as unanswered (it is no store error
// and wraps no PgError), tries again. It did not reach the database
// (claimUnsettled), so a conflict after it is not taken as its record.
var errFinishHeld = errors.New("a row the change needs is held by another transaction")

func (s *Store) finishAttemptAs(ctx context.Context, attemptID string, out AttemptOutcome) (stored string, err error) {
	var jobID string
	err = s.inTx(ctx, func(tx pgx.Tx) error {
		// The lock wait's bound goes in the same round trip as the attempt's
		// job (this runs for every loser of a hedged job and every failure).
		if err := lockWaitQueryRow(ctx, tx, transitionLockWait,
			`SELECT job_id::text FROM attempts WHERE id = $1`, attemptID).Scan(&jobID); err != nil {
			return notFound(err)
		}
		if _, _, err := lockJob(ctx, tx, jobID, ""); err != nil {
			return err
		}
		err := tx.QueryRow(ctx, `WITH x AS (
				UPDATE attempts a SET state = CASE WHEN $2::text = 'unknown' THEN `+unknownUnlessEndedSQL+` ELSE $2::text END,
					error = `+unknownEndErrorSQL+`, validation_errors = $4, usage = $5,
					provider_response_id = nullif($6, ''), response_model = nullif($7, ''), latency_ms = $8,
					finished_at = now(), lease_owner = NULL, lease_expires_at = NULL
				FROM jobs j
				WHERE a.id = $1 AND j.id = a.job_id AND a.state IN ('starting', 'running')
				RETURNING a.id, a.job_id, a.provider, a.state
			), e AS (`+lostEventSQL+`)
			SELECT state FROM x`,
			attemptID, out.State, jsonOrNil(out.Error), jsonOrNil(out.ValidationErrors), jsonOrNil(out.Usage),
			out.ProviderResponseID, out.ResponseModel, out.LatencyMS).Scan(&stored)
		if errors.Is(err, pgx.ErrNoRows) {
			return fmt.Errorf("%w: attempt %s is no longer in flight", ErrStateConflict, attemptID)
		}
		return err
	})
	if err != nil {
		return "", jobBusy(err, jobID, transitionLockWait)
	}
	return stored, nil
}

// RecordCancelledUsage stores usage on an attempt that was settled while its
// request was out, by another hand than its own run: its job's cancellation
// (CancelJob cancels attempts in flight without usage: the cancelling
// transaction cannot know what the provider billed), a win that settled it
// `lost` while its outcome was unknown, or a resolution that failed it. The
// attempt's own run calls it when FinishAttempt found the attempt already
// settled: usage is what it would have recorded (the provider's, or the
// router's estimate of the prompt, marked estimated), so the attempt has its
// cost_usd and the job's cost_usd and lost_cost_usd count it. Attempts never
// sent are left alone (a not_sent one, RecordNotSent; one still starting when
// settled is never sent), as is one that already has usage: the first figure
// stays, unless it was the router's estimate and usage is the provider's
// (lateUsageSQL). written says whether the row changed, so that the
// metrics count it once. The row is waited for up to transitionLockWait, as
// FinishAttempt waits.
func (s *Store) RecordCancelledUsage(ctx context.Context, attemptID string, usage any) (written bool, err error) {
	u := jsonOrNil(usage)
	if u == nil {
		return false, nil
	}
	err = s.inTx(ctx, func(tx pgx.Tx) error {
		var n int
		err := lockWaitQueryRow(ctx, tx, transitionLockWait, lateUsageSQL, attemptID, u).Scan(&n)
		written = n > 0
		return err
	})
	if err != nil {
		return false, err
	}
	return written, nil
}

// lateUsageSQL gives usage ($2) to an attempt that was sent (started, not
// not_sent) and settled by another hand while its request was out, and that
// has no usage yet: cancelled by its job's cancellation, `lost` (its unknown
// outcome settled by a sibling's win: unknownUnlessEndedSQL, casSQL, winSQL)
// or `failed` (resolved so by an operator or reconciliation: a failure
// resolved without usage drops the router's estimate, ResolveAttempt). The
// provider's answer, or the failure it billed, says what it was paid for.
// A `failed` attempt takes only usage the provider reported, never the
// router's estimate: a failure resolved without usage ("the provider has no
// record of it") dropped the estimate on purpose, the provider having done no
// work, and the attempt's own run ending late must not put it back. Usage
// the provider reported (not marked estimated) also replaces the router's
// estimate (marked "estimated": true: reconciliation's, a resolution's), a
// late failure's billed usage as a late answer's. Reported usage is never
// replaced. It returns how many rows it changed (0 or 1).
const lateUsageSQL = `WITH x AS (
		UPDATE attempts a SET usage = $2
		FROM jobs j
		WHERE a.id = $1 AND j.id = a.job_id
			AND ((j.state = 'cancelled' AND a.state = 'cancelled') OR a.state = 'lost'
				OR (a.state = 'failed' AND $2::jsonb->>'estimated' IS DISTINCT FROM 'true'))
			AND a.started_at IS NOT NULL
			AND (a.usage IS NULL OR a.usage = 'null'::jsonb
				OR (a.usage->>'estimated' = 'true'
					AND $2::jsonb->>'estimated' IS DISTINCT FROM 'true'))
			AND (a.error IS NULL OR a.error->>'kind' IS DISTINCT FROM '` + notSentKind + `')
		RETURNING a.id
	)
	SELECT count(*) FROM x`

func jsonOrNil(v any) []byte {
	if v == nil {
		return nil
	}
	if raw, ok := v.(json.RawMessage); ok {
		if len(raw) == 0 {
			return nil
		}
		return jsontext.Sanitize(raw)
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil
	}
	// A record of what a provider did (its error text, a violation quoting its
	// output) must be storable whatever it holds: jsonb refuses \u0000.
	return jsontext.Sanitize(b)
}

func routingOrNil(b []byte) any {
	if len(b) == 0 {
		return nil
	}
	return b
}

// NotSent reports whether a was never sent to its provider: the router
// recorded it cancelled with kind not_sent (RecordNotSent, HandOverUnsent).
// Such an attempt counts neither as its provider tried nor against
// max_attempts.
func NotSent(a Attempt) bool {
	if a.State != AttemptCancelled || len(a.Error) == 0 {
		return false
	}
	var e struct {
		Kind string `json:"kind"`
	}
	return json.Unmarshal(a.Error, &e) == nil && e.Kind == notSentKind
}
