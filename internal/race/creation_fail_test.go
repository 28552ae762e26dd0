package race_test

import (
	"context"
	"testing"
	"time"

	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/race"
	"github.com/routerhq/router/internal/store"
)

// The same for the attempt's creation: a database error on CreateAttempt that
// is none of the store's refusals (not busy, a limit, blocked, finished or a
// lost lease — a dropped connection, a restart, a statement error) stops the
// race, and with nothing in flight the job is settled `failed` ("could not
// create an attempt: …") although the failover target was never sent the
// request and a third target was never tried. A held row in the same place
// leaves the job to its lease instead (leftToLease: "It is not failed for a
// target it could not try", docs/lifecycle.md).
func TestFailedCreationDoesNotFailTheJob(t *testing.T) {
	b := setup(t, race.Route{},
		provSpec{name: "primary", respond: func(int, *providers.Request) providers.Step {
			return providers.Step{Status: 503} // no retries configured: fails over
		}},
		provSpec{name: "fallback", respond: ok(validTriage)},
		provSpec{name: "third", respond: ok(validTriage)},
	)
	ctx := context.Background()
	if _, err := b.db.Pool.Exec(ctx, `
		CREATE SEQUENCE create_fail;
		CREATE FUNCTION fail_create() RETURNS trigger LANGUAGE plpgsql AS $$
		BEGIN
			IF nextval('create_fail') = 1 THEN -- a sequence: the RAISE does not roll it back
				RAISE EXCEPTION 'test: the database failed the attempt''s creation';
			END IF;
			RETURN NEW;
		END $$;
		CREATE TRIGGER fail_create BEFORE INSERT ON attempts
			FOR EACH ROW WHEN (NEW.provider = 'fallback')
			EXECUTE FUNCTION fail_create();`); err != nil {
		t.Fatal(err)
	}
	job := b.submit(t)
	deadline := time.Now().Add(30 * time.Second)
	for {
		j := b.job(t, job.ID)
		if j.State != store.JobPending && j.State != store.JobRunning && !b.runner.Runs(job.ID) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the job never settled: %s", j.State)
		}
		time.Sleep(10 * time.Millisecond)
	}
	j := b.job(t, job.ID)
	var states []string
	for _, a := range j.Attempts {
		states = append(states, a.Provider+"/"+a.Role+"="+a.State)
	}
	errText := ""
	if j.Error != nil {
		errText = *j.Error
	}
	if j.State == store.JobFailed && b.prov["third"].Calls() == 0 && b.prov["fallback"].Calls() == 0 {
		t.Fatalf("job failed (%q) with attempts %v: neither the fallback nor the third target was ever sent the request",
			errText, states)
	}
	t.Logf("job %s (%q), attempts %v, fallback called %d, third called %d", j.State, errText, states,
		b.prov["fallback"].Calls(), b.prov["third"].Calls())
}
