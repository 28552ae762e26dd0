package race_test

import (
	"context"
	"testing"
	"time"

	"github.com/routerhq/router/internal/race"
	"github.com/routerhq/router/internal/store"
)

// An attempt whose outcome is unknown (its first-byte deadline passed after
// the request was sent) but whose unknown state the database refuses to
// record is still in flight there, so nothing in the database blocks a new
// attempt. The orchestration must not take that as "no unknown attempt" and
// fail over — the primary may have done the work — but abandon the attempt:
// the job is left unsettled for its lease to expire and recovery to decide.
func TestUnrecordedUnknownDoesNotFailOver(t *testing.T) {
	b := setup(t, race.Route{},
		provSpec{name: "primary", respond: hang, timeout: 50 * time.Millisecond},
		provSpec{name: "fallback", respond: ok(validTriage)},
	)
	ctx := context.Background()
	// The database itself refuses to record any attempt as unknown.
	if _, err := b.db.Pool.Exec(ctx, `
		CREATE FUNCTION refuse_unknown() RETURNS trigger LANGUAGE plpgsql AS $$
		BEGIN
			RAISE EXCEPTION 'test: recording an attempt as unknown is refused';
		END $$;
		CREATE TRIGGER refuse_unknown BEFORE UPDATE ON attempts
			FOR EACH ROW WHEN (NEW.state = 'unknown' AND OLD.state IS DISTINCT FROM 'unknown')
			EXECUTE FUNCTION refuse_unknown();`); err != nil {
		t.Fatal(err)
	}

	job := b.submit(t)
	// Stop takes no new job and waits for the job's orchestration to end on
	// its own: the primary's call ends at its deadline, and whatever the
	// orchestrator then does (fail over, or stop) has finished when it returns.
	b.stop()

	if n := b.prov["primary"].Calls(); n != 1 {
		t.Fatalf("primary called %d times, want 1", n)
	}
	if n := b.prov["fallback"].Calls(); n != 0 {
		t.Fatalf("the fallback was called %d time(s) while the primary's outcome is unknown", n)
	}
	j := b.job(t, job.ID)
	if j.State != store.JobRunning {
		t.Fatalf("job %s (error %q), want it left running for recovery", j.State, derefString(j.Error))
	}
	if len(j.Attempts) != 1 || j.Attempts[0].Provider != "primary" || j.Attempts[0].State != store.AttemptRunning {
		t.Fatalf("attempts %+v, want only the primary's, still running (its end unrecorded)", j.Attempts)
	}

	// Recovery decides: once the attempt's lease expires, it becomes unknown
	// and the job unknown, which blocks any new attempt.
	if _, err := b.db.Pool.Exec(ctx, `DROP TRIGGER refuse_unknown ON attempts`); err != nil {
		t.Fatal(err)
	}
	if _, err := b.db.Pool.Exec(ctx, `UPDATE attempts SET lease_expires_at = now() - interval '1 second' WHERE id = $1`, j.Attempts[0].ID); err != nil {
		t.Fatal(err)
	}
	if _, err := b.st.ExpireAttemptLeases(ctx); err != nil {
		t.Fatal(err)
	}
	j = b.job(t, job.ID)
	if j.State != store.JobUnknown || len(j.Attempts) != 1 || j.Attempts[0].State != store.AttemptUnknown {
		t.Fatalf("after the lease expired: job %s attempts %+v, want the job and its one attempt unknown", j.State, j.Attempts)
	}
	if n := b.prov["fallback"].Calls(); n != 0 {
		t.Fatalf("the fallback was called %d time(s)", n)
	}
}
