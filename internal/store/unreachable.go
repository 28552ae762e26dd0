package store

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
)

// notSentRetryFor bounds how long a record that an attempt was never sent
// (RecordNotSent, HandOverUnsent) is tried while the database does not answer:
// a hiccup, a fail-over under way, a shutdown's last writes. Past it the
// caller gives up and the attempt's lease decides (it becomes unknown).
const notSentRetryFor = 5 * time.Second

// lostClaimRetryFor bounds how long a claim whose outcome was lost is handed
// over in the background (handOverLostClaim): past it the first attempt's
// lease has expired and recovery has settled it.
const lostClaimRetryFor = time.Minute

// tryTimeout bounds one try of a write retried while the database does not
// answer, so that a connection that hangs (no refusal, no answer) is given up
// and the next try dials again.
const tryTimeout = 5 * time.Second

// writeWhileUnreachable runs write until the database answers it — nil, or
// an error that says what the database did (a store error such as
// ErrNotFound or ErrStateConflict, or a statement's ERROR: the write is done
// or cannot be) — retrying for up to budget, with backoff from 50 ms to 2 s,
// while the answer is lost (unreachable). Only writes that are safe to run
// again may use it: each of its callers changes only rows still in the state
// it expects, so a try that committed makes the next one find nothing.
func writeWhileUnreachable(ctx context.Context, budget time.Duration, write func(context.Context) error) error {
	deadline := time.Now().Add(budget)
	wait := 50 * time.Millisecond
	for {
		tctx, cancel := context.WithTimeout(ctx, tryTimeout)
		err := write(tctx)
		cancel()
		if !unreachable(err) || ctx.Err() != nil || time.Now().Add(wait).After(deadline) {
			return err
		}
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return err
		}
		wait = min(2*wait, 2*time.Second)
	}
}

// unreachable reports whether err says nothing about what the database did:
// the connection failed, the try timed out, the session ended (FATAL). An
// error of the store's own (the rows were not as expected) or a statement's
// ERROR is an answer.
func unreachable(err error) bool {
	if err == nil {
		return false
	}
	for _, answered := range []error{ErrNotFound, ErrStateConflict, ErrLeaseLost, ErrJobFinished, ErrKeyReused,
		ErrAttemptBlocked, ErrAttemptLimit, ErrInflightLimit, ErrInvalidResult, ErrKeyRebound} {
		if errors.Is(err, answered) {
			return false
		}
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		return pgErr.Severity == "FATAL" || pgErr.Severity == "PANIC"
	}
	return true
}

// handOverLostClaim settles a claim that CreateJob gave up on without
// learning whether it committed (the database stopped answering after the
// batch was sent, for longer than CreateJob retries). If it committed, its
// job is running with its first attempt recorded as `running` and never
// sent, and nobody orchestrates it: when the lease ran out recovery would
// make that attempt `unknown`, and the job would wait for an operator
// although no provider was called. So, in the background, it hands the job
// over as never sent (HandOverUnsent: the attempt `cancelled` not_sent, the
// lease released), and recovery starts the job exactly once (SPEC §6.8); if
// it did not commit, the hand-over finds no attempt and there is nothing to
// do. It does not run the claim again: a claim committed now would create a
// job its caller was told failed. A job whose caller sent no key (Unkeyed)
// is failed instead of handed over: its caller, told the creation failed,
// cannot reach it, and running it would pay a provider for an answer nobody
// reads (and a resend would be a second job).
func (s *Store) handOverLostClaim(req *claimRequest) {
	const why = "the request was never sent: the database stopped answering while the job was created, and the router that created it handed it over"
	const unkeyed = "the request was never sent: the database stopped answering while the job was created, its caller (who sent no Idempotency-Key) was told it failed, and nothing else can reach it"
	err := writeWhileUnreachable(context.Background(), lostClaimRetryFor, func(ctx context.Context) error {
		if !req.nj.Unkeyed {
			return s.handOverUnsent(ctx, req.jobID, req.attID, req.nj.LeaseOwner, why)
		}
		err := s.FinishAttempt(ctx, req.attID, AttemptOutcome{State: AttemptCancelled,
			Error: map[string]any{"kind": notSentKind, "fault": "router", "message": unkeyed}})
		if err != nil && !errors.Is(err, ErrStateConflict) { // a try that committed: the job is next
			return err
		}
		_, err = s.SettleJobAs(ctx, req.jobID, req.nj.LeaseOwner, unkeyed)
		return err
	})
	switch {
	case errors.Is(err, ErrNotFound):
		err = nil // the claim did not commit (or its attempt has been settled since)
	case err != nil:
		s.opt.Log.Error("could not hand over a job whose creation's outcome was lost; recovery settles it when its lease expires",
			"job_id", req.jobID, "attempt_id", req.attID, "err", err)
	default:
		s.opt.Log.Warn("handed over a job whose creation's outcome was lost: it committed, and another pass starts it",
			"job_id", req.jobID, "attempt_id", req.attID)
	}
	if s.onLostClaim != nil {
		s.onLostClaim(err)
	}
}
