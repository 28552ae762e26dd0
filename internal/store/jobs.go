package store

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
)

// NewJob is what a caller asks for. Fingerprint is computed by the caller
// (see Fingerprint).
type NewJob struct {
	Owner          string
	Operation      string
	IdempotencyKey string
	Fingerprint    []byte
	PromptVersion  string
	Route          string
	Input          json.RawMessage
	// ParsedInput is Input as the API parsed it, handed to the executor's
	// plan (store.Job.ParsedInput); it is not stored.
	ParsedInput map[string]any
	Params      json.RawMessage
	// LeaseOwner, when set, takes the job's orchestration lease at creation, so
	// recovery on other replicas leaves the new job to its creator.
	LeaseOwner string
	LeaseFor   time.Duration
	// First, when set, creates the job's first attempt in the same commit.
	First *FirstAttempt
	// Unkeyed says the caller sent no idempotency key (IdempotencyKey was
	// made up for it): told that the creation failed, it cannot find the job
	// again, so a job whose creation's outcome was lost is failed, not run
	// (handOverLostClaim). It is not stored.
	Unkeyed bool
	// ReplayOnly says the caller may only replay the job its key holds, not
	// create one: it was let past max_live_jobs only because its key held a
	// job (a replay is never refused). The claim then answers the job that
	// holds the key, unexpired, when its statement runs, and creates nothing
	// — no key row inserted or taken over — when none does (the key's
	// retention passed since it was looked up): ErrReplayKeyReleased. It is
	// not stored.
	ReplayOnly bool
	// MaxLive is the owner's max_live_jobs (SPEC §17); 0: unlimited. A claim
	// with a limit that would create a job is refused (ErrLiveLimit, nothing
	// stored) when the owner's live jobs, counted in the claim's own
	// statement under the owner's lock (liveLimitLockSQL), are at it; a claim
	// whose key holds a job is never refused. It is not stored.
	MaxLive int
}

// jobColumns are a job's columns (table alias j), in the order of Job.dest.
// The key's expiry (key_expires_at) is its key row's while the job holds its
// key; once the key expired and a new job took it over, the key row is the
// new job's, and the old job's expiry is the one released_keys remembers
// (migration 0006) — not null, which says the job is not terminal and its key
// never expires (docs/api.md). Only a terminal job can have lost its key (a
// key expires only once its job is terminal, and a job whose key was taken
// cannot be retried: ErrKeyRebound), so released_keys is looked up for
// terminal jobs alone. The two lookups are two columns, combined as the row
// is scanned (releasedKey): the job's expiry, and whether its key was taken
// over (Job.KeyTaken), from the same two index probes — a second column
// asking "has it a key row?" would be a third.
const jobColumns = jobColumnsHead + `j.input, j.params, ` + jobColumnsMiddle + `j.result, ` + jobColumnsTail

// jobColumnsHead, jobColumnsMiddle and jobColumnsTail are jobColumns around
// the job's input, params and result, which a reader that shows none of them
// reads as NULL (recentJobColumns).
const (
	jobColumnsHead = `j.id::text, j.owner, j.operation, j.idempotency_key, j.fingerprint, j.prompt_version,
	j.route, `
	jobColumnsMiddle = `j.state, j.version, j.created_at, j.updated_at, j.finished_at,
	(SELECT k.expires_at FROM idempotency_keys k WHERE k.job_id = j.id),
	CASE WHEN j.state IN ('succeeded', 'failed', 'cancelled')
		THEN (SELECT r.expired_at FROM released_keys r WHERE r.job_id = j.id) END,
	`
	jobColumnsTail = `j.completed_by::text, j.error, j.routing, j.attempt_base`
)

// scanJob scans a row of jobColumns, followed by the columns of extra, if
// any.
func scanJob(row pgx.Row, extra ...any) (*Job, error) {
	var j Job
	if err := row.Scan(append(j.dest(), extra...)...); err != nil {
		return nil, notFound(err)
	}
	return &j, nil
}

// dest is where a row of jobColumns (in that order) is scanned to.
func (j *Job) dest() []any {
	return []any{&j.ID, &j.Owner, &j.Operation, &j.IdempotencyKey, &j.fingerprint, &j.PromptVersion,
		&j.Route, rawJSON(&j.Input), rawJSON(&j.Params), &j.State, &j.Version, &j.CreatedAt, &j.UpdatedAt, &j.FinishedAt,
		&j.KeyExpiresAt, releasedKey{j}, rawJSON(&j.Result), &j.CompletedBy, &j.Error, rawJSON(&j.Routing), &j.AttemptBase}
}

// releasedKey scans the expiry released_keys remembers for a job whose key
// was taken over (the column after key_expires_at in jobColumns) into the
// job: a job without a key row of its own (its key_expires_at, scanned just
// before, is null) whose key was released has lost its key to a newer job.
// A released job never gets a key row back (a retry rebinds only a key row
// that is still the job's), so it has no expiry of its own to prefer.
type releasedKey struct{ j *Job }

// ScanTimestamptz implements pgtype.TimestamptzScanner.
func (r releasedKey) ScanTimestamptz(v pgtype.Timestamptz) error {
	if v.Valid && r.j.KeyExpiresAt == nil {
		t := v.Time
		r.j.KeyExpiresAt, r.j.KeyTaken = &t, true
	}
	return nil
}

// GetJob reads one job of owner with its attempts and race events. Another
// owner's job is ErrNotFound, exactly like a missing one, and so is an id that
// is not a UUID in canonical form (checkJobID).
func (s *Store) GetJob(ctx context.Context, owner, id string) (*Job, error) {
	return s.getJob(ctx, id, owner, true)
}

// GetJobAny reads a job without an owner check (for the router's own workers and
// operator commands).
func (s *Store) GetJobAny(ctx context.Context, id string) (*Job, error) {
	return s.getJob(ctx, id, "", false)
}

// GetJobToRun is GetJobAny for the runner about to run the job (an adopted
// or resumed job): it also reads, in the same round trip and on the database
// clock, how long the job's current run has lasted (Job.RunElapsed), which
// its deadline counts from — the job's creation, or the caller's last retry
// (migration 0018).
func (s *Store) GetJobToRun(ctx context.Context, id string) (*Job, error) {
	var micros int64
	j, err := s.readJobBatch(ctx, id, []any{&micros}, jobToRunSQL, id)
	if err != nil {
		return nil, err
	}
	j.RunElapsed = time.Duration(max(micros, 0)) * time.Microsecond
	return j, nil
}

// getJob reads the job, its attempts and its race events in one round trip.
func (s *Store) getJob(ctx context.Context, id, owner string, checkOwner bool) (*Job, error) {
	return s.readJobBatch(ctx, id, nil, jobByIDSQL, id, checkOwner, owner)
}

// readJobBatch sends jobSQL (a row of jobColumns, then the columns of extra)
// with args, and the job's attempts and race events, in one round trip and
// one snapshot: the three reads are one read-only REPEATABLE READ
// transaction (beginSnapshotSQL), begun and committed in the same batch.
// Each statement of a batch under READ COMMITTED sees the database as of
// its own start, and a transition committed between two of them (a win,
// a retry) made a job read as running with no result beside an attempt that
// had already won.
func (s *Store) readJobBatch(ctx context.Context, id string, extra []any, jobSQL string, args ...any) (*Job, error) {
	if err := checkJobID(id); err != nil {
		return nil, err
	}
	b := &pgx.Batch{}
	b.Queue(beginSnapshotSQL)
	b.Queue(jobSQL, args...)
	b.Queue(attemptsOfJobSQL, id)
	b.Queue(raceEventsOfJobSQL, id)
	b.Queue(commitSQL)
	// The pool closes, rather than reuses, a connection that a failure
	// left inside the transaction.
	br := s.pool.SendBatch(ctx, b)
	defer br.Close()
	if _, err := br.Exec(); err != nil {
		return nil, err
	}
	j, err := readJob(br, extra...)
	if err != nil {
		return nil, err
	}
	if _, err := br.Exec(); err != nil {
		return nil, err
	}
	return j, nil
}

// beginSnapshotSQL and commitSQL frame a read of jobs with their attempts and
// race events (readJobBatch, readJobsInSnapshot) as one transaction that sees
// one snapshot of the database, taken by its first read. Read only: it
// takes no lock a writer waits for, and PostgreSQL never fails it with a
// serialization error.
const (
	beginSnapshotSQL = `BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY`
	commitSQL        = `COMMIT`
)

// raceEventColumns are a race event's columns (table alias r), in the order
// of RaceEvent.dest.
const raceEventColumns = `r.id, r.attempt_id::text, r.kind, r.provider, r.latency_ms, r.usage, r.detail, r.created_at`

// dest is where a row of raceEventColumns (in that order) is scanned to.
func (e *RaceEvent) dest() []any {
	return []any{&e.ID, &e.AttemptID, &e.Kind, &e.Provider, &e.LatencyMS, rawJSON(&e.Usage), &e.Detail, &e.CreatedAt}
}

// getJob's three reads: the job whose id is $1 (only when $2 is false or its
// owner is $3), its attempts and its race events.
const (
	jobByIDSQL         = `SELECT ` + jobColumns + ` FROM jobs j WHERE j.id = $1 AND (NOT $2 OR j.owner = $3)`
	attemptsOfJobSQL   = `SELECT ` + attemptColumns + ` FROM attempts a WHERE a.job_id = $1 ORDER BY a.seq`
	raceEventsOfJobSQL = `SELECT ` + raceEventColumns + ` FROM race_events r WHERE r.job_id = $1 ORDER BY r.id`
)

// jobToRunSQL is jobByIDSQL for GetJobToRun: the job whose id is $1, then how
// long its current run has lasted, in microseconds, on the database clock.
const jobToRunSQL = `SELECT ` + jobColumns + `,
	floor(extract(epoch FROM now() - coalesce(j.run_started_at, j.created_at)) * 1000000)::bigint
	FROM jobs j WHERE j.id = $1`

// readJob reads a job's three results from br (getJob's reads): the job
// (ErrNotFound when none) with the columns of extra after jobColumns, its
// attempts and its race events.
func readJob(br pgx.BatchResults, extra ...any) (*Job, error) {
	j, err := scanJob(br.QueryRow(), extra...)
	if err != nil {
		return nil, err
	}
	rows, err := br.Query()
	if err != nil {
		return nil, err
	}
	if j.Attempts, err = pgx.CollectRows(rows, scanAttemptRow); err != nil {
		return nil, err
	}
	rows, err = br.Query()
	if err != nil {
		return nil, err
	}
	j.RaceEvents, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (RaceEvent, error) {
		var e RaceEvent
		err := r.Scan(e.dest()...)
		return e, err
	})
	if err != nil {
		return nil, err
	}
	if j.Attempts == nil {
		j.Attempts = []Attempt{}
	}
	if j.RaceEvents == nil {
		j.RaceEvents = []RaceEvent{}
	}
	j.sumCosts()
	return j, nil
}

// readJobsInSnapshot reads jobs with their attempts and race events as of
// one snapshot, in two round trips on one connection: beginSnapshotSQL and
// q (with args) in one batch, whose rows read turns into the jobs to return
// (read may stop early: the rows it leaves are discarded as they come); then
// the attempts and race events of those jobs, and commitSQL, in another. The
// attempts are read only for the jobs read returns. Two statements run at
// different moments saw a job and its attempts at different moments: a job
// read as running with no result beside an attempt that had already won.
func (s *Store) readJobsInSnapshot(ctx context.Context, q string, args []any, read func(pgx.Rows) ([]*Job, error)) ([]*Job, error) {
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		return nil, err
	}
	// Released inside the transaction (a failure before its commit), the
	// connection is closed by the pool rather than reused.
	defer conn.Release()
	b := &pgx.Batch{}
	b.Queue(beginSnapshotSQL)
	b.Queue(q, args...)
	br := conn.SendBatch(ctx, b)
	jobs, err := func() ([]*Job, error) {
		if _, err := br.Exec(); err != nil {
			return nil, err
		}
		rows, err := br.Query()
		if err != nil {
			return nil, err
		}
		defer rows.Close()
		return read(rows)
	}()
	if cerr := br.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, err
	}
	if f, _ := ctx.Value(betweenSnapshotReadsKey{}).(func()); f != nil {
		f()
	}
	b = &pgx.Batch{}
	ids := make([]string, 0, len(jobs))
	for _, j := range jobs {
		ids = append(ids, j.ID)
	}
	if len(ids) > 0 {
		b.Queue(`SELECT `+attemptColumns+` FROM attempts a WHERE a.job_id = ANY($1::uuid[]) ORDER BY a.job_id, a.seq`, ids)
		b.Queue(`SELECT r.job_id::text, `+raceEventColumns+` FROM race_events r WHERE r.job_id = ANY($1::uuid[]) ORDER BY r.id`, ids)
	}
	b.Queue(commitSQL)
	br = conn.SendBatch(ctx, b)
	defer br.Close()
	if len(ids) > 0 {
		if err := readChildren(br, jobs); err != nil {
			return nil, err
		}
	}
	if _, err := br.Exec(); err != nil {
		return nil, err
	}
	return jobs, nil
}

// betweenSnapshotReadsKey is the context key of a function that
// readJobsInSnapshot calls between its two round trips (for tests: a change
// committed there is not seen by the second).
type betweenSnapshotReadsKey struct{}

// readChildren reads from br the attempts, then the race events, of jobs
// (readJobsInSnapshot's reads) into them.
func readChildren(br pgx.BatchResults, jobs []*Job) error {
	byID := make(map[string]*Job, len(jobs))
	for _, j := range jobs {
		byID[j.ID] = j
		j.Attempts, j.RaceEvents = []Attempt{}, []RaceEvent{}
	}
	if err := readRows(br, func(rows pgx.Rows) error {
		var a Attempt
		if err := rows.Scan(a.dest()...); err != nil {
			return err
		}
		j := byID[a.JobID]
		j.Attempts = append(j.Attempts, a)
		return nil
	}); err != nil {
		return err
	}
	for _, j := range jobs {
		j.sumCosts()
	}
	return readRows(br, func(rows pgx.Rows) error {
		var jobID string
		var e RaceEvent
		if err := rows.Scan(append([]any{&jobID}, e.dest()...)...); err != nil {
			return err
		}
		j := byID[jobID]
		j.RaceEvents = append(j.RaceEvents, e)
		return nil
	})
}

// JobStateAny reads only a job's state, without an owner check.
func (s *Store) JobStateAny(ctx context.Context, id string) (string, error) {
	if err := checkJobID(id); err != nil {
		return "", err
	}
	var state string
	err := s.pool.QueryRow(ctx, `SELECT state FROM jobs WHERE id = $1`, id).Scan(&state)
	return state, notFound(err)
}

// JobState reads only a job's state (cheap, for waiting).
func (s *Store) JobState(ctx context.Context, owner, id string) (string, error) {
	if err := checkJobID(id); err != nil {
		return "", err
	}
	var state string
	err := s.pool.QueryRow(ctx, `SELECT state FROM jobs WHERE id = $1 AND owner = $2`, id, owner).Scan(&state)
	return state, notFound(err)
}

// WatchJob reads a job's state for a waiter that may be on another replica
// than the job's runner, and makes sure the job's win will be announced to it
// by NOTIFY (batched wins notify only watched jobs). owner "" matches any
// owner.
//
// The flag is set with an UPDATE of the job's row, which the win also locks:
// either the flag commits first and the win, re-reading the row it waited
// for, sees it and notifies; or the win commits first and this reads the job
// as won. Unsettled jobs only; a job already watched is not written again.
//
// It waits for the job's row up to WatchLockWait (WatchJobWaiting).
func (s *Store) WatchJob(ctx context.Context, owner, id string) (string, error) {
	return s.WatchJobWaiting(ctx, owner, id, WatchLockWait)
}

// WatchLockWait is the longest WatchJob waits for a job's row another
// transaction holds, as the job's transitions do (transitionLockWait).
const WatchLockWait = transitionLockWait

// WatchJobWaiting is WatchJob waiting for the job's row up to wait
// (lock_timeout; 0 or less is WatchLockWait). The usual holder is the job's
// win, for milliseconds, and waiting for it is what makes the flag and the
// win meet (the flag's rule above). A row held for longer — an operator's
// transaction left open in psql, a replica cut off in the middle of one —
// would otherwise hold the waiter, and a connection of the pool, for as long
// as it is held: past wait the flag is not set, nothing is written, and the
// error is ErrBusy (a *BusyError naming the job). The caller reads the state
// plainly instead (JobState) and watches again later.
func (s *Store) WatchJobWaiting(ctx context.Context, owner, id string, wait time.Duration) (string, error) {
	if err := checkJobID(id); err != nil {
		return "", err
	}
	if wait <= 0 {
		wait = WatchLockWait
	}
	for try := 0; ; try++ {
		// The bound and the update in one batch, one round trip: its
		// implicit transaction ends with it, and so does the bound
		// (set_config's is_local); a lock wait that runs into it aborts
		// that transaction alone, and the connection goes back to the pool
		// idle.
		b := &pgx.Batch{}
		b.Queue(lockWaitSQL, lockWaitArg(wait))
		b.Queue(`UPDATE jobs SET watched = true
			WHERE id = $1 AND ($2 = '' OR owner = $2) AND NOT watched AND state IN ('pending', 'running')
			RETURNING state`, id, owner)
		var state string
		err := lockWaitRow{br: s.pool.SendBatch(ctx, b)}.Scan(&state)
		if err == nil {
			return state, nil
		}
		if !errors.Is(err, pgx.ErrNoRows) {
			return "", jobBusy(err, id, wait)
		}
		// Not found, settled or watched already — as of a later snapshot
		// than the update's, which is what this statement reads.
		var watched bool
		err = s.pool.QueryRow(ctx, `SELECT state, watched FROM jobs WHERE id = $1 AND ($2 = '' OR owner = $2)`,
			id, owner).Scan(&state, &watched)
		if err != nil {
			return "", notFound(err)
		}
		// A job that went back to running (an unknown attempt resolved)
		// between the two statements is not watched yet: again.
		if watched || (state != JobPending && state != JobRunning) || try >= 2 {
			return state, nil
		}
	}
}

// SetRouting records the routing decisions of a job (which providers were
// eligible and why not) while it is pending or running: a decision made after
// the job finished (a hedge denied as its win committed) is not recorded, so
// the job stays as its final transition left it (and as its win announced it).
// Only the job's orchestrator records it (owner must hold the job's lease): a
// process that stalled past its lease and was taken over would otherwise
// overwrite the decisions of the replica that now runs the job.
//
// It waits for the job's row up to transitionLockWait: a row another
// transaction holds for longer is ErrBusy (a *BusyError), and nothing is
// recorded.
func (s *Store) SetRouting(ctx context.Context, jobID, owner string, routing json.RawMessage) error {
	_, err := s.execLazyWaiting(ctx, transitionLockWait, `UPDATE jobs SET routing = $2
		WHERE id = $1 AND state IN ('pending', 'running') AND lease_owner = $3`, jobID, routing, owner)
	return jobBusy(err, jobID, transitionLockWait)
}

// Fingerprint returns the job's request fingerprint.
func (j *Job) Fingerprint() []byte { return j.fingerprint }

// KeyHeld reports whether (owner, operation, key) is bound to a job whose
// retention has not passed.
func (s *Store) KeyHeld(ctx context.Context, owner, operation, key string) (bool, error) {
	var held bool
	err := s.pool.QueryRow(ctx, keyHeldSQL, owner, operation, key).Scan(&held)
	return held, err
}
