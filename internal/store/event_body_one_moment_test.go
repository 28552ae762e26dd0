package store_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/routerhq/router/internal/store"
)

// succeededWithRunningHedge is a job of owner acme (which has a webhook) won
// by its primary while its hedge still runs, the id of that hedge, and the
// job's job.succeeded event, which has no snapshot: its body is built from
// the job as read at its first try.
func succeededWithRunningHedge(t *testing.T, st *store.Store, key string) (job *store.Job, hedgeID string, ev *store.Event) {
	t.Helper()
	ctx := context.Background()
	j, c := runningJob(t, st, "acme", key)
	hedge, err := st.CreateAttempt(ctx, store.NewAttempt{JobID: j.ID, Provider: "q", Role: store.RoleHedge, LeaseOwner: "r1"})
	if err != nil {
		t.Fatal(err)
	}
	if err := st.MarkAttemptRunning(ctx, hedge.ID); err != nil {
		t.Fatal(err)
	}
	if won, err := st.Complete(ctx, c); err != nil || !won {
		t.Fatalf("complete: won %v, %v", won, err)
	}
	evs, err := st.JobEvents(ctx, "acme", j.ID)
	if err != nil || len(evs) != 1 || evs[0].Type != "job.succeeded" {
		t.Fatalf("events %+v, %v; want one job.succeeded", evs, err)
	}
	if h := getJob(t, st, j.ID).Attempts[1]; h.ID != hedge.ID || h.State != store.AttemptRunning {
		t.Fatalf("the hedge is %s after the win, want running", h.State)
	}
	return j, hedge.ID, evs[0]
}

// lateAnswerHoldingRaceEvents begins, on pool, the hedge's late answer as
// Store.discard writes it (the attempt lost with its usage, and a "lost"
// race event, in one transaction), holding race_events locked until the
// transaction ends.
func lateAnswerHoldingRaceEvents(t *testing.T, pool *pgxpool.Pool, hedgeID string) (commit func()) {
	t.Helper()
	ctx := context.Background()
	tx, err := pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tx.Rollback(ctx) })
	if _, err := tx.Exec(ctx, `LOCK TABLE race_events IN ACCESS EXCLUSIVE MODE`); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		`UPDATE attempts SET state = 'lost', usage = '{"input_tokens":10,"output_tokens":5}', latency_ms = 7,
			finished_at = coalesce(finished_at, now()), lease_owner = NULL, lease_expires_at = NULL
		 WHERE id = $1 AND state IN ('starting', 'running', 'unknown')`,
		`INSERT INTO race_events (job_id, attempt_id, kind, provider, latency_ms, usage, detail)
		 SELECT job_id, id, 'lost', provider, 7, '{"input_tokens":10,"output_tokens":5}',
		   'a valid result arrived after another attempt won; discarded' FROM attempts WHERE id = $1`,
	} {
		if _, err := tx.Exec(ctx, q, hedgeID); err != nil {
			t.Fatal(err)
		}
	}
	return func() {
		if err := tx.Commit(ctx); err != nil {
			t.Fatal(err)
		}
	}
}

// A job.succeeded event's job, attempts and race events are read as of one
// moment. Read in three statements each with its own view, a loser's late
// answer committed between the attempts' and the race events' reads gave a
// body that never existed — the hedge still running, without usage, beside
// the "lost" race event of its discarded answer with that usage — frozen at
// the first try into every redelivery. In every query exec mode (the batch
// holds BEGIN and COMMIT), with a send-lease claim (the worker's read) and
// without. (In describe_exec the race events' statement waits for the lock
// when it is described, before any statement runs: that mode reads one
// moment either way.)
func TestSucceededEventBodyIsOneMoment(t *testing.T) {
	for _, mode := range execModes {
		for _, claim := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s/claim=%v", mode, claim), func(t *testing.T) {
				b := setup(t)
				ctx := context.Background()
				acmeHasWebhook(t, b)
				_, st := modeStore(t, b, mode, 1)
				j, hedgeID, ev := succeededWithRunningHedge(t, st, "torn")
				read := func(token string) (*store.Event, *store.Job, error) {
					if !claim {
						e, _, job, err := st.EventForDelivery(ctx, ev.ID)
						return e, job, err
					}
					e, _, job, err := st.ClaimEventForDelivery(ctx, ev.ID, store.SendClaim{Token: token, For: time.Minute})
					return e, job, err
				}
				// Warm the connection's statement cache (a read freezes nothing).
				if _, _, err := read("warm"); err != nil {
					t.Fatal(err)
				}

				commit := lateAnswerHoldingRaceEvents(t, b.db.Pool, hedgeID)
				type result struct {
					ev  *store.Event
					job *store.Job
					err error
				}
				done := make(chan result, 1)
				go func() {
					e, job, err := read("warm") // the same try, read again: its own lease
					done <- result{e, job, err}
				}()
				waitForLockWait(t, b.db.Pool, "race_events")
				commit()
				var r result
				select {
				case r = <-done:
				case <-time.After(30 * time.Second):
					t.Fatal("the event's read did not finish")
				}
				if r.err != nil || r.job == nil {
					t.Fatalf("read: job %v, %v", r.job, r.err)
				}
				if claim && !r.ev.SendLease.Held {
					t.Fatalf("the try's read again does not hold its own send lease: %+v", r.ev.SendLease)
				}
				var hedge *store.Attempt
				for i := range r.job.Attempts {
					if r.job.Attempts[i].ID == hedgeID {
						hedge = &r.job.Attempts[i]
					}
				}
				if hedge == nil {
					t.Fatalf("job %s read without its hedge %s:\n%s", j.ID, hedgeID, r.job.AppendJSON(nil))
				}
				lost := 0
				for _, e := range r.job.RaceEvents {
					if e.AttemptID != nil && *e.AttemptID == hedgeID && e.Kind == "lost" {
						lost++
					}
				}
				// The read began before the late answer committed: it sees
				// the hedge running and no race event of it. (Seeing both
				// the lost hedge and its race event would be one moment too.)
				if (hedge.State == store.AttemptLost) != (lost == 1) {
					t.Fatalf("job.succeeded body shows the hedge %s beside %d 'lost' race event(s) of its discarded answer: "+
						"a state that never existed, frozen into every redelivery\n%s", hedge.State, lost, r.job.AppendJSON(nil))
				}

				// Read after the late answer, the body shows both.
				_, after, err := read("warm")
				if err != nil {
					t.Fatal(err)
				}
				if h := after.Attempts[1]; h.ID != hedgeID || h.State != store.AttemptLost || len(after.RaceEvents) == 0 {
					t.Fatalf("after the late answer: hedge %s %s, %d race events; want it lost beside its race event",
						h.ID, h.State, len(after.RaceEvents))
				}
			})
		}
	}
}

// A read of events that fails inside the job's snapshot (here: the race
// events' statement times out waiting for a lock) leaves its connection in a
// failed transaction, which the pool closes rather than reuses: the next read
// on the pool's one connection succeeds, and the same try's read again holds
// the send lease its failed read may have committed (the worker releases it
// on the failure).
func TestEventReadFailingInSnapshotLeavesNoTransaction(t *testing.T) {
	for _, mode := range execModes {
		t.Run(mode, func(t *testing.T) {
			b := setup(t)
			ctx := context.Background()
			acmeHasWebhook(t, b)
			cfg, err := pgxpool.ParseConfig(fmt.Sprintf("%s&pool_max_conns=1&default_query_exec_mode=%s", b.db.URL, mode))
			if err != nil {
				t.Fatal(err)
			}
			store.ConfigurePool(cfg)
			// Any wait fails: the lock below is held until the read has failed.
			cfg.ConnConfig.RuntimeParams["lock_timeout"] = "10ms"
			pool, err := pgxpool.NewWithConfig(ctx, cfg)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(pool.Close)
			st := store.New(pool, store.Options{KeyRetention: time.Hour})
			_, _, ev := succeededWithRunningHedge(t, st, "fails")
			claim := store.SendClaim{Token: "try-1", For: time.Minute}
			// Warm the connection's statement cache: in the modes that
			// prepare, the failure is then the race events' execution, after
			// the claim's commit and inside the snapshot, not their prepare.
			if _, _, _, err := st.EventForDelivery(ctx, ev.ID); err != nil {
				t.Fatal(err)
			}

			tx, err := b.db.Pool.Begin(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer tx.Rollback(ctx)
			if _, err := tx.Exec(ctx, `LOCK TABLE race_events IN ACCESS EXCLUSIVE MODE`); err != nil {
				t.Fatal(err)
			}
			_, _, _, err = st.ClaimEventForDelivery(ctx, ev.ID, claim)
			var pgErr *pgconn.PgError
			if !errors.As(err, &pgErr) || pgErr.Code != "55P03" {
				t.Fatalf("read with race_events locked: %v; want a lock timeout (55P03)", err)
			}
			if err := tx.Rollback(ctx); err != nil {
				t.Fatal(err)
			}

			again, _, job, err := st.ClaimEventForDelivery(ctx, ev.ID, claim)
			if err != nil {
				t.Fatalf("the read after a failed one, on the pool's one connection: %v", err)
			}
			if !again.SendLease.Held || job == nil || len(job.Attempts) != 2 {
				t.Fatalf("the try's read again: lease %+v, job %v; want its lease and the job", again.SendLease, job)
			}
		})
	}
}
