package store_test

import (
	"context"
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/routerhq/router/internal/store"
)

// orphanPauseKey is the advisory lock the test holds to pause ClaimOrphans'
// update of jobs (see TestClaimOrphansNeverAdoptsAJobWhoseAttemptIsBeingCreated).
const orphanPauseKey = 7_424_242

// ClaimOrphans must never adopt a job whose stalled orchestrator (its job
// lease just expired) is creating an attempt at that moment: the adopter would
// start another one while the first may be doing the work (SPEC §5, §6). The
// test pauses ClaimOrphans' UPDATE of jobs in a BEFORE STATEMENT trigger
// (after its snapshot is taken, before it reads a row) on an advisory lock it
// holds, lets the former owner's CreateAttempt run (to its commit, or until
// it waits on a row lock), then lets ClaimOrphans go on. Exactly one of them
// may win the job: the adopter (and the former owner's attempt is refused,
// fenced), or the former owner's attempt (and the job is not adopted).
//
// "running": CreateAttempt only locks the job row (FOR UPDATE) and does not
// change it; "pending": it also updates the row (pending becomes running), so
// the claim's row lock re-checks its WHERE on the new row version
// (EvalPlanQual) — with the NOT EXISTS over attempts still read with the old
// snapshot. Both adopted the job before ClaimOrphans locked its candidates
// in a statement of their own; since, the pause lands in the update that
// re-checks them, with the row already locked, so CreateAttempt waits for
// the claim and is fenced.
func TestClaimOrphansNeverAdoptsAJobWhoseAttemptIsBeingCreated(t *testing.T) {
	for _, state := range []string{store.JobRunning, store.JobPending} {
		t.Run(state, func(t *testing.T) {
			b := setup(t)
			ctx := context.Background()
			nj := newJob(t, "acme", "triage", "orphan-race", `{}`)
			nj.LeaseOwner, nj.LeaseFor = "replica-a", time.Hour
			j, _, err := b.st.CreateJob(ctx, nj)
			if err != nil {
				t.Fatal(err)
			}
			// replica-a is stalled: its job lease has expired, and the job has
			// nothing in flight (an orphan, as far as recovery can tell).
			if _, err := b.db.Pool.Exec(ctx, `UPDATE jobs SET state = $2,
					lease_expires_at = now() - interval '1 second' WHERE id = $1`, j.ID, state); err != nil {
				t.Fatal(err)
			}
			if _, err := b.db.Pool.Exec(ctx, `
				CREATE FUNCTION orphan_pause() RETURNS trigger LANGUAGE plpgsql SET lock_timeout = 0 AS $$
				BEGIN
					IF current_query() LIKE 'UPDATE jobs%SET lease_owner%' AND current_query() LIKE '%NOT EXISTS%' THEN
						PERFORM pg_advisory_xact_lock_shared(`+strconv.Itoa(orphanPauseKey)+`);
					END IF;
					RETURN NULL;
				END $$;
				CREATE TRIGGER orphan_pause BEFORE UPDATE ON jobs FOR EACH STATEMENT EXECUTE FUNCTION orphan_pause();`); err != nil {
				t.Fatal(err)
			}
			hold, err := b.db.Pool.Acquire(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer hold.Release()
			if _, err := hold.Exec(ctx, `SELECT pg_advisory_lock($1)`, orphanPauseKey); err != nil {
				t.Fatal(err)
			}
			released := false
			release := func() {
				if !released {
					released = true
					if _, err := hold.Exec(ctx, `SELECT pg_advisory_unlock($1)`, orphanPauseKey); err != nil {
						t.Error(err)
					}
				}
			}
			defer release()

			type claim struct {
				ids []string
				err error
			}
			claimed := make(chan claim, 1)
			go func() {
				ids, err := b.st.ClaimOrphans(ctx, "replica-b", time.Hour, 10, nil)
				claimed <- claim{ids, err}
			}()
			// The claim's backend, paused: it waits on the advisory lock.
			var claimer int
			for claimer == 0 {
				select {
				case cl := <-claimed:
					t.Fatalf("ClaimOrphans (%v, %v) did not pause in its update of jobs", cl.ids, cl.err)
				default:
				}
				err := b.db.Pool.QueryRow(ctx, `SELECT coalesce(max(pid), 0) FROM pg_locks
					WHERE locktype = 'advisory' AND NOT granted AND objid = $1`, orphanPauseKey).Scan(&claimer)
				if err != nil {
					t.Fatal(err)
				}
			}

			type created struct {
				a   *store.Attempt
				err error
			}
			attempted := make(chan created, 1)
			go func() {
				a, err := b.st.CreateAttempt(ctx, store.NewAttempt{JobID: j.ID, Provider: "p", Role: store.RolePrimary,
					LeaseOwner: "replica-a", LeaseFor: time.Hour, Orchestrator: "replica-a"})
				attempted <- created{a, err}
			}()
			// CreateAttempt commits, or waits on the job row's lock (held by
			// the claim); either way the claim may go on.
			var ca *created
			for ca == nil {
				select {
				case c := <-attempted:
					ca = &c
				default:
					var blocked bool
					if err := b.db.Pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_stat_activity
							WHERE $1::int = ANY(pg_blocking_pids(pid)))`, claimer).Scan(&blocked); err != nil {
						t.Fatal(err)
					}
					if blocked {
						release()
						c := <-attempted
						ca = &c
					}
				}
			}
			release()
			cl := <-claimed
			if cl.err != nil {
				t.Fatal(cl.err)
			}
			adopted := len(cl.ids) == 1 && cl.ids[0] == j.ID
			switch {
			case ca.err == nil && adopted:
				t.Fatalf("replica-b adopted job %s while replica-a's attempt %s (%s) was in flight: a second attempt may now be sent",
					j.ID, ca.a.ID, ca.a.State)
			case ca.err == nil:
				// replica-a's attempt stands; the job is not an orphan.
			case adopted && errors.Is(ca.err, store.ErrLeaseLost):
				// The adopter won; replica-a was fenced.
			default:
				t.Fatalf("claimed %v, CreateAttempt: %v", cl.ids, ca.err)
			}
			var owner string
			if err := b.db.Pool.QueryRow(ctx, `SELECT coalesce(lease_owner, '') FROM jobs WHERE id = $1`, j.ID).Scan(&owner); err != nil {
				t.Fatal(err)
			}
			if want := map[bool]string{true: "replica-b", false: "replica-a"}[adopted]; owner != want {
				t.Fatalf("job lease owner %q, want %q", owner, want)
			}
		})
	}
}
