package store_test

import (
	"context"
	"errors"
	"testing"

	"github.com/routerhq/router/internal/store"
)

// The outbox event of a transition is written in the transition's own
// transaction (SPEC §16): when the event cannot be written, the transition
// does not happen either — for every path that makes a job terminal or
// unknown (a cancellation, a settlement as failed or unknown, the batched win,
// a late win). Written after the commit instead, a crash (here: a refused
// insert) between the two would leave a terminal job whose owner is never
// told. The test refuses every insert into job_events, then allows them and
// checks that the same transitions then go through with exactly one event each.
func TestTransitionRollsBackWhenItsEventCannotBeWritten(t *testing.T) {
	b := setup(t)
	ctx := context.Background()
	acmeHasWebhook(t, b)
	if _, err := b.db.Pool.Exec(ctx, `
		CREATE FUNCTION refuse_event() RETURNS trigger LANGUAGE plpgsql AS $$
		BEGIN
			RAISE EXCEPTION 'test: the outbox refuses events';
		END $$;
		CREATE TRIGGER refuse_event BEFORE INSERT ON job_events FOR EACH ROW EXECUTE FUNCTION refuse_event();`); err != nil {
		t.Fatal(err)
	}

	type transition struct {
		name string
		want string // the job's state once it goes through
		run  func(j *store.Job, c store.Completion) error
	}
	transitions := []transition{
		{"cancel", store.JobCancelled, func(j *store.Job, _ store.Completion) error {
			return b.st.CancelJob(ctx, "acme", j.ID)
		}},
		{"batched win", store.JobSucceeded, func(_ *store.Job, c store.Completion) error {
			won, err := b.st.Complete(ctx, c)
			if err == nil && !won {
				return errNotWon
			}
			return err
		}},
		{"late win", store.JobSucceeded, func(j *store.Job, c store.Completion) error {
			// A completion whose read version is stale (as after its
			// lease expired and the job went unknown) takes lateWin's
			// path: the compare-and-swap again, under the job's lock.
			c.ReadVersion = j.Version - 1
			won, err := b.st.Complete(ctx, c)
			if err == nil && !won {
				return errNotWon
			}
			return err
		}},
		{"settle failed", store.JobFailed, func(j *store.Job, _ store.Completion) error {
			_, err := b.st.SettleJob(ctx, j.ID, "every attempt failed")
			return err
		}},
		{"settle unknown", store.JobUnknown, func(j *store.Job, _ store.Completion) error {
			_, err := b.st.SettleJob(ctx, j.ID, "")
			return err
		}},
	}
	// prepare makes a running job of acme ready for the transition.
	prepare := func(tr transition, key string) (*store.Job, store.Completion) {
		t.Helper()
		j, c := runningJob(t, b.st, "acme", key)
		switch tr.name {
		case "settle failed", "settle unknown":
			state := store.AttemptFailed
			if tr.want == store.JobUnknown {
				state = store.AttemptUnknown
			}
			if err := b.st.FinishAttempt(ctx, j.Attempts[0].ID, store.AttemptOutcome{State: state}); err != nil {
				t.Fatal(err)
			}
		}
		return j, c
	}
	state := func(id string) (string, int) {
		t.Helper()
		var s string
		var events int
		if err := b.db.Pool.QueryRow(ctx, `SELECT j.state, (SELECT count(*) FROM job_events e WHERE e.job_id = j.id)
			FROM jobs j WHERE j.id = $1`, id).Scan(&s, &events); err != nil {
			t.Fatal(err)
		}
		return s, events
	}

	for i, tr := range transitions {
		j, c := prepare(tr, "refused-"+itoa(i))
		before, _ := state(j.ID)
		if err := tr.run(j, c); err == nil {
			t.Errorf("%s: went through although its event could not be written", tr.name)
		}
		if s, events := state(j.ID); s != before || events != 0 {
			t.Errorf("%s: job %s with %d events after its event was refused, want %s and none (the transition without its event)",
				tr.name, s, events, before)
		}
	}

	if _, err := b.db.Pool.Exec(ctx, `DROP TRIGGER refuse_event ON job_events`); err != nil {
		t.Fatal(err)
	}
	for i, tr := range transitions {
		j, c := prepare(tr, "allowed-"+itoa(i))
		if err := tr.run(j, c); err != nil {
			t.Fatalf("%s: %v", tr.name, err)
		}
		if s, events := state(j.ID); s != tr.want || events != 1 {
			t.Errorf("%s: job %s with %d events, want %s with one", tr.name, s, events, tr.want)
		}
	}
}

var errNotWon = errors.New("the valid answer did not win")
