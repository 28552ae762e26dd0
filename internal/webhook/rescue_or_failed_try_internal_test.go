package webhook

import (
	"testing"
	"time"

	"github.com/riverqueue/river/rivertype"
)

// River asks its retry policy for the retry of a try that failed and of a
// try its rescuer found stuck, with the job as fetched (running) in both.
// Backoff tells them apart by the try's age: a failed try's job is at most
// liveTryMax old by the database's clock when River's executor asks, a rescued
// one at least rescueStuckAfter by the rescuer's (this process's). A replica
// whose clock runs minutes ahead of the database's must not take its failed
// tries for rescues (its endpoint retried every few seconds, not at a
// failed try's backoff), nor a rescued try's retry wait a failed try's.
func TestRescuedTryWaitsSecondsAFailedOneItsBackoff(t *testing.T) {
	dbNow := time.Now()
	for _, tc := range []struct {
		name     string
		ahead    time.Duration // the process clock minus the database's, as the worker measured it
		tried    time.Duration // how long before dbNow the try's job was fetched (AttemptedAt, the database's now())
		rescued  bool
		measured bool // the worker has measured the offset
	}{
		{name: "a try that failed at once", tried: time.Second},
		{name: "a try that failed at its timeout", tried: liveTryMax - time.Second, measured: true},
		{name: "a try that failed, on a replica 6 minutes ahead of the database", ahead: 6 * time.Minute, tried: time.Second, measured: true},
		{name: "a try rescued", tried: rescueStuckAfter + 30*time.Second, rescued: true},
		{name: "a try rescued, its replica's clock measured", tried: rescueStuckAfter + time.Second, rescued: true, measured: true},
		{name: "a try rescued by a leader 1 minute behind the database", ahead: -time.Minute, tried: rescueStuckAfter + time.Minute + time.Second, rescued: true, measured: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			procNow := dbNow.Add(tc.ahead)
			hints := &retryHints{}
			if tc.measured {
				hints.noteClock(dbNow, procNow)
			}
			b := Backoff{Base: 5 * time.Second, Cap: time.Hour, Now: func() time.Time { return procNow }, hints: hints}.withDefaults()
			attempted := dbNow.Add(-tc.tried)
			job := &rivertype.JobRow{ID: 1, Attempt: 10, MaxAttempts: 10000, State: rivertype.JobStateRunning, AttemptedAt: &attempted}
			// The wait on the database's clock: River's due time less the
			// process clock, plus the process clock's lead.
			wait := b.NextRetry(job).Sub(procNow) + tc.ahead
			if tc.rescued && wait > rescueWaitMax {
				t.Errorf("a rescued try's retry waits %s, want at most %s: its endpoint did not fail", wait, rescueWaitMax)
			}
			if !tc.rescued && wait < b.Base*(1<<8)/2 {
				t.Errorf("the 10th failed try's retry waits %s, want a failed try's backoff, at least %s", wait, b.Base*(1<<8)/2)
			}
		})
	}
}
