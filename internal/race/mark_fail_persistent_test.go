package race_test

import (
	"context"
	"testing"

	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/race"
	"github.com/routerhq/router/internal/store"
)

// A running mark the database keeps failing (not once: every try) never lets
// the failover be sent. Its start is tried once more at once, then the race,
// with nothing in flight, leaves the job to its lease — unsettled, for
// recovery to run on — rather than failing it for a target it could not try
// (it used to be failed with the primary's 503 alone).
func TestPersistentMarkFailureLeavesTheJobToItsLease(t *testing.T) {
	b := setup(t, race.Route{},
		provSpec{name: "primary", respond: func(int, *providers.Request) providers.Step {
			return providers.Step{Status: 503} // no retries configured: fails over
		}},
		provSpec{name: "fallback", respond: ok(validTriage)},
	)
	if _, err := b.db.Pool.Exec(context.Background(), `
		CREATE FUNCTION fail_mark_always() RETURNS trigger LANGUAGE plpgsql AS $$
		BEGIN
			RAISE EXCEPTION 'test: the database fails every running mark of the fallback';
		END $$;
		CREATE TRIGGER fail_mark_always BEFORE UPDATE ON attempts
			FOR EACH ROW WHEN (OLD.state = 'starting' AND NEW.state = 'running' AND NEW.provider = 'fallback')
			EXECUTE FUNCTION fail_mark_always();`); err != nil {
		t.Fatal(err)
	}
	job := b.submit(t)
	changed, unsubscribe := b.listener.Subscribe(job.ID)
	defer unsubscribe()
	waitRunEnded(t, b, changed, job.ID)
	j := b.job(t, job.ID)
	if j.State != store.JobRunning {
		t.Fatalf("job %s (%q), attempts %s: want running, left to its lease (the fallback was never sent)",
			j.State, derefString(j.Error), attemptsOf(j))
	}
	var unsent int
	for _, a := range j.Attempts {
		if a.Provider == "fallback" {
			if a.State != store.AttemptCancelled || !store.NotSent(a) {
				t.Fatalf("the fallback's attempt is %s (%s): want cancelled, never sent", a.State, a.Error)
			}
			unsent++
		}
	}
	if unsent != 2 || b.prov["fallback"].Calls() != 0 {
		t.Fatalf("attempts %s, fallback called %d: want two fallback attempts never sent (tried once more at once), no call",
			attemptsOf(j), b.prov["fallback"].Calls())
	}
}
