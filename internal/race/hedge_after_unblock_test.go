package race_test

import (
	"context"
	"testing"
	"time"

	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/race"
	"github.com/routerhq/router/internal/store"
)

// SPEC §6.7, §15: the failover run() starts once the blocked settle finds
// the unknown attempt resolved (finish → store.ErrUnblocked) is put on the
// hedge clock as any attempt is. The hedge timer was left stopped when the
// last attempt ended unknown; without re-arming it, a silent failover ran to
// its own deadline, went unknown in turn and left the job unknown with a
// healthy target never tried.
func TestHedgeAfterUnblockFailoverIsHedged(t *testing.T) {
	obs := newHoldFinished(1)
	// hedge_after is long enough that the primary, whose end the observer
	// holds while the test sets up, is not hedged meanwhile (checked below).
	b := setupObserved(t, race.Route{HedgeAfter: 3 * time.Second, MaxAttempts: 5}, nil, obs,
		provSpec{name: "primary", respond: func(int, *providers.Request) providers.Step {
			return providers.Step{Error: &providers.Error{Kind: providers.KindTimeout, OutcomeUnknown: true,
				Message: "no response byte before the first-byte timeout"}}
		}},
		provSpec{name: "fallback", respond: hang, timeout: 8 * time.Second},
		provSpec{name: "third", respond: ok(validTriage)},
	)
	ctx := context.Background()
	job := b.submit(t)
	<-obs.held // the primary's attempt is recorded unknown; the orchestrator has not seen it

	// Hold the job's row so that the orchestrator's blocked settle waits for
	// it, then resolve the unknown attempt before the settle reads it.
	tx, err := b.db.Pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	var pid int
	if err := tx.QueryRow(ctx, `SELECT pg_backend_pid() FROM jobs WHERE id = $1 FOR UPDATE`, job.ID).Scan(&pid); err != nil {
		t.Fatal(err)
	}
	close(obs.release)
	waitBlockedOn(t, b, pid)
	if _, err := tx.Exec(ctx, `UPDATE attempts SET state = 'failed',
		error = coalesce(error, '{}'::jsonb) || '{"resolution": {"kind": "resolved", "outcome": "failed"}}'::jsonb
		WHERE job_id = $1 AND state = 'unknown'`, job.ID); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}

	j := b.waitSettled(t, job.ID)
	if a := attemptBy(j, "fallback"); a == nil || a.Role != store.RoleFailover {
		t.Fatalf("set-up: want the fallback's attempt to be the failover started after the unblock, got %+v", a)
	}
	if j.State != store.JobSucceeded || b.prov["third"].Calls() != 1 {
		t.Fatalf("job %s (%s), attempts %v, third called %d times: want the silent failover hedged on third and the job succeeded",
			j.State, derefString(j.Error), attemptStates(j), b.prov["third"].Calls())
	}
	if a := attemptBy(j, "third"); a == nil || a.Role != store.RoleHedge {
		t.Fatalf("third's attempt %+v, want a hedge of the silent failover", a)
	}
}

// waitBlockedOn returns once a statement locking a job's row waits for the
// database backend pid (a transaction the test holds): a bounded poll of the
// database, the test's own deadline its only bound.
func waitBlockedOn(t *testing.T, b *bundle, pid int) {
	t.Helper()
	for {
		var waiting bool
		if err := b.db.Pool.QueryRow(t.Context(), `SELECT EXISTS (SELECT 1 FROM pg_stat_activity
			WHERE $1::int = ANY(pg_blocking_pids(pid)) AND query LIKE '%FROM jobs WHERE id = $1 FOR UPDATE%')`, pid).Scan(&waiting); err != nil {
			t.Fatal(err)
		}
		if waiting {
			return
		}
	}
}

// attemptStates says each attempt of j as provider/role=state.
func attemptStates(j *store.Job) []string {
	var states []string
	for _, a := range j.Attempts {
		states = append(states, a.Provider+"/"+a.Role+"="+a.State)
	}
	return states
}
