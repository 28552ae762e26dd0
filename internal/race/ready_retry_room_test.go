package race_test

import (
	"strings"
	"testing"
	"time"

	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/race"
	"github.com/routerhq/router/internal/store"
)

// A retry kept in ready (keepRetry: its creation gave up on the job's row,
// held by another transaction) starts when the next attempt ends — by then
// perhaps with too little of the deadline left for any response byte. Such a
// retry is not sent, as a failover is not (failoverFits): the deadline would
// cut it before its first byte, leaving the attempt and the job `unknown`
// with a call paid for nothing. The job fails with the deadline's cause
// (docs/chat.md: 504 deadline_exceeded). It was sent, and the job ended
// unknown.
//
// The job is put within the last 700 ms of its deadline — less than the
// retry's room — once the retry has been kept (SetDeadlineLeftHook), not by
// waiting for the wall clock to get there: under load the job's read, from
// which the deadline counts, came late enough that more than the room was
// still left when the test let the retry be tried.
func TestReadyRetryWithNoRoomBeforeTheDeadlineIsNotSent(t *testing.T) {
	const deadline = time.Minute // far past the store's 2 s lock wait, which the kept retry spends
	gaveUp := make(chan struct{})
	adm := &unusedAdmission{target: "second", seen: map[string]int{}, unused: func(k int) {
		if k == 2 { // second's retry
			close(gaveUp)
		}
	}}
	obs := &failedOnce{provider: "second", failed: make(chan struct{}), goOn: make(chan struct{})}
	primaryGo := make(chan struct{})
	b := setupObserved(t, race.Route{HedgeAfter: 10 * time.Millisecond, MaxInflight: 2, Deadline: deadline}, adm, obs,
		provSpec{name: "primary", respond: func(int, *providers.Request) providers.Step {
			<-primaryGo // in flight, silent: hedged by second
			return providers.Step{Status: 503}
		}},
		// Its first-byte budget (1 s) is the room its retry needs.
		provSpec{name: "second", maxRetries: 1, firstByte: time.Second, respond: func(call int, req *providers.Request) providers.Step {
			if call == 1 {
				return providers.Step{Status: 503}
			}
			return hang(call, req) // sent with no room: silent until the deadline cuts it
		}},
	)
	goOn, letPrimaryEnd := releaser(t, obs.goOn), releaser(t, primaryGo)
	job := b.submit(t)
	awaitSignal(t, obs.failed, "second's failure")
	unhold := holdJobRow(t, b, job.ID)
	goOn() // second's retry is scheduled with room; its creation gives up on the held row: kept (ready)
	awaitSignal(t, gaveUp, "second's retry giving up on the held row")
	// Within the last 700 ms of the deadline: less than the retry's room.
	restore := race.SetDeadlineLeftHook(func(jobID string, left time.Duration) time.Duration {
		if jobID == job.ID {
			return 700 * time.Millisecond
		}
		return left
	})
	defer restore()
	unhold()
	letPrimaryEnd() // its end is the race's next event: the kept retry is tried then

	j := b.waitSettled(t, job.ID)
	if b.prov["second"].Calls() != 1 {
		t.Errorf("second called %d times: want its retry not sent with less than its room before the deadline", b.prov["second"].Calls())
	}
	if _, byDeadline := race.FailedByDeadline(j); j.State != store.JobFailed || !byDeadline ||
		!strings.Contains(deref(j.Error), "no room for the retry of second") {
		t.Fatalf("job %s (error %s), attempts %v: want it failed by the deadline, saying the retry of second had no room",
			j.State, deref(j.Error), attemptStates(j))
	}
	// The job's routing says so too, as it does for a failover with no room.
	if routing := string(j.Routing); !strings.Contains(routing, `"retry_no_room"`) || !strings.Contains(routing, "left no room for the retry of second") {
		t.Errorf("routing %s: want a retry_no_room event naming second's retry", routing)
	}
}
