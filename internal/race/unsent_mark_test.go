package race_test

import (
	"context"
	"testing"
	"time"

	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/race"
	"github.com/routerhq/router/internal/store"
)

// A failover whose attempt was created but whose running mark
// (MarkAttemptRunning, the last write before the send) failed with a database
// error — a dropped connection, a restart, anything but "no longer starting" —
// is recorded `cancelled` `not_sent`: its request never left. Yet the race
// counts its target as tried (o.used was set before the mark) and stops
// there: with nothing in flight the job is settled `failed`, although the
// failover target was never sent the request and a third target was never
// tried. SPEC §3: `failed` means every eligible attempt ended in a
// definitive failure; docs/race.md: an attempt never sent "counts neither as
// its target tried nor against max_attempts"; docs/lifecycle.md: a job "is
// not failed for a target it could not try".
func TestFailedRunningMarkDoesNotFailTheJob(t *testing.T) {
	b := setup(t, race.Route{},
		provSpec{name: "primary", respond: func(int, *providers.Request) providers.Step {
			return providers.Step{Status: 503} // no retries configured: fails over
		}},
		provSpec{name: "fallback", respond: ok(validTriage)},
		provSpec{name: "third", respond: ok(validTriage)},
	)
	ctx := context.Background()
	// The database fails the fallback's running mark once (a statement that
	// errors as a dropped connection or a restart would), nothing else.
	if _, err := b.db.Pool.Exec(ctx, `
		CREATE SEQUENCE mark_fail;
		CREATE FUNCTION fail_mark() RETURNS trigger LANGUAGE plpgsql AS $$
		BEGIN
			IF nextval('mark_fail') = 1 THEN -- a sequence: the RAISE does not roll it back
				RAISE EXCEPTION 'test: the database failed the running mark';
			END IF;
			RETURN NEW;
		END $$;
		CREATE TRIGGER fail_mark BEFORE UPDATE ON attempts
			FOR EACH ROW WHEN (OLD.state = 'starting' AND NEW.state = 'running' AND NEW.provider = 'fallback')
			EXECUTE FUNCTION fail_mark();`); err != nil {
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
	if j.State == store.JobFailed && b.prov["third"].Calls() == 0 {
		t.Fatalf("job failed (%q) with attempts %v: the fallback was never sent the request (its running mark failed) "+
			"and the third target was never tried (fallback called %d, third called %d)",
			errText, states, b.prov["fallback"].Calls(), b.prov["third"].Calls())
	}
	t.Logf("job %s (%q), attempts %v, fallback called %d, third called %d", j.State, errText, states,
		b.prov["fallback"].Calls(), b.prov["third"].Calls())
}

// The retry variant: on a one-target route, a 503 with a retry left is
// retried; the retry's running mark fails with a database error, the retry is
// recorded `cancelled` `not_sent` — never sent — and dropped: the job fails
// with the 503 whose retry was never made.
func TestFailedRunningMarkDoesNotDropTheRetry(t *testing.T) {
	b := setup(t, race.Route{},
		provSpec{name: "primary", maxRetries: 1, respond: func(call int, _ *providers.Request) providers.Step {
			if call == 1 {
				return providers.Step{Status: 503}
			}
			return providers.Step{Output: validTriage}
		}},
	)
	ctx := context.Background()
	if _, err := b.db.Pool.Exec(ctx, `
		CREATE SEQUENCE retry_mark_fail;
		CREATE FUNCTION fail_retry_mark() RETURNS trigger LANGUAGE plpgsql AS $$
		BEGIN
			IF nextval('retry_mark_fail') = 1 THEN -- a sequence: the RAISE does not roll it back
				RAISE EXCEPTION 'test: the database failed the running mark';
			END IF;
			RETURN NEW;
		END $$;
		CREATE TRIGGER fail_retry_mark BEFORE UPDATE ON attempts
			FOR EACH ROW WHEN (OLD.state = 'starting' AND NEW.state = 'running' AND NEW.role = 'retry')
			EXECUTE FUNCTION fail_retry_mark();`); err != nil {
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
	if j.State == store.JobFailed && b.prov["primary"].Calls() == 1 {
		t.Fatalf("job failed (%q) with attempts %v: its retry was never sent (the running mark failed), and no other retry was made",
			errText, states)
	}
	t.Logf("job %s (%q), attempts %v, primary called %d", j.State, errText, states, b.prov["primary"].Calls())
}
