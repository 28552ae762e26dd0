package race_test

import (
	"context"
	"testing"
	"time"

	"github.com/routerhq/router/internal/race"
	"github.com/routerhq/router/internal/store"
)

// SPEC §3, §6.7: an unknown attempt resolved `failed` after the orchestrator
// learnt of it but before it settled the job does not leave the job failed
// with a target never tried. The resolution saw the job running (not unknown)
// and so did not resume it: the settle itself must see that no attempt is
// unknown any more and let the race go on to the fallback.
func TestResolutionBeforeTheBlockedSettleLetsTheRaceGoOn(t *testing.T) {
	obs := newHoldFinished(1)
	b := setupObserved(t, race.Route{}, nil, obs,
		provSpec{name: "primary", respond: hang, timeout: 30 * time.Millisecond},
		provSpec{name: "fallback", respond: ok(validTriage)},
	)
	ctx := context.Background()
	job := b.submit(t)
	<-obs.held // the primary's attempt is recorded unknown; the orchestrator has not seen it
	if j := b.job(t, job.ID); len(j.Attempts) != 1 || j.Attempts[0].State != store.AttemptUnknown {
		t.Fatalf("attempts %+v, want the primary's one unknown", j.Attempts)
	}

	// Hold the job's row so that the orchestrator's settle waits for it.
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
	// Wait until the orchestrator's settle waits for the row: it has decided
	// that the job is blocked and has nothing more to start.
	for {
		var waiting bool
		if err := b.db.Pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_stat_activity
			WHERE $1::int = ANY(pg_blocking_pids(pid)) AND query LIKE '%FROM jobs WHERE id = $1 FOR UPDATE%')`, pid).Scan(&waiting); err != nil {
			t.Fatal(err)
		}
		if waiting {
			break
		}
	}
	// The resolution commits first, as ResolveAttempt does for a running job.
	if _, err := tx.Exec(ctx, `UPDATE attempts SET state = 'failed',
		error = coalesce(error, '{}'::jsonb) || '{"resolution": {"kind": "resolved", "outcome": "failed"}}'::jsonb
		WHERE job_id = $1 AND state = 'unknown'`, job.ID); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}

	j := b.waitSettled(t, job.ID)
	if j.State != store.JobSucceeded {
		t.Fatalf("job %s (%s), want it succeeded on the fallback once the unknown attempt was resolved", j.State, derefString(j.Error))
	}
	if n := b.prov["fallback"].Calls(); n != 1 {
		t.Fatalf("fallback called %d times, want 1", n)
	}
	if a := attemptBy(j, "primary"); a == nil || a.State != store.AttemptFailed {
		t.Fatalf("attempts %+v, want the primary's left failed as resolved", j.Attempts)
	}
}
