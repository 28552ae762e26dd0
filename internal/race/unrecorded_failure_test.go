package race_test

import (
	"testing"
	"time"

	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/race"
	"github.com/routerhq/router/internal/store"
)

// Found in review (rrace10), and fixed: the record is tried again
// (store.FinishAttemptAs), and one that cannot be written abandons the
// attempt (TestUnwritableFailureIsNotFailedOver). As found:
//
// An attempt whose definitive failure could not be recorded (its row held
// past the store's lock wait, as by an operator's open transaction or a
// replica cut off mid-transaction; a dropped connection does the same) is
// handled by the race as failed — it fails over — but stays `running` in the
// database, its lease renewed by this runner's lease keeper for as long as
// the job runs here. When the failover fails too, the settlement finds an
// attempt "in flight" and leaves the job running; once the run has ended and
// the zombie's lease runs out, recovery marks it unknown (lease_expired: "the
// router ... died or lost the database") and the job `unknown`, waiting for
// an operator, although every attempt's outcome was known to the router.
func TestUnrecordedFailureDoesNotLeaveTheJobRunning(t *testing.T) {
	called, proceed := make(chan struct{}), make(chan struct{})
	fallbackCalled := make(chan struct{})
	b := setup(t, race.Route{},
		provSpec{name: "primary", respond: func(call int, _ *providers.Request) providers.Step {
			if call == 1 {
				close(called)
				<-proceed
			}
			return providers.Step{Output: `{"not":"a triage"}`} // invalid: fails over
		}},
		provSpec{name: "fallback", respond: func(call int, _ *providers.Request) providers.Step {
			if call == 1 {
				close(fallbackCalled)
			}
			return providers.Step{Output: `{"not":"a triage"}`}
		}},
	)
	job := b.submit(t)
	<-called
	primary := job.Attempts[0].ID
	// The primary's row is held while its failure is recorded: the record
	// gives up after the store's lock wait (ErrBusy).
	pid, release := holdRows(t, b, `SELECT FROM attempts WHERE id = $1 FOR UPDATE`, primary)
	close(proceed)
	awaitGaveUp(t, b, pid, "validation_errors = $4")
	release()
	<-fallbackCalled
	// The run ends once the fallback's failure is handled (polled: the
	// runner says so only through Runs).
	deadline := time.Now().Add(hangBound)
	for b.runner.Runs(job.ID) {
		if time.Now().After(deadline) {
			t.Fatal("the job's run never ended")
		}
		time.Sleep(5 * time.Millisecond)
	}
	j := b.job(t, job.ID)
	p := attemptBy(j, "primary")
	if j.State != store.JobFailed || p == nil || p.State == store.AttemptRunning {
		ps := "<none>"
		if p != nil {
			ps = p.State
		}
		t.Fatalf("after its run ended the job is %s (want failed) and its primary attempt, whose invalid answer the race "+
			"acted on, is %s in the database: nothing will settle it but its lease's expiry, which makes the job unknown", j.State, ps)
	}
}
