package race_test

import (
	"testing"
	"time"

	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/race"
	"github.com/routerhq/router/internal/store"
)

// A loser kept running after the win (keep_losers) whose outcome then turns
// out unknown (no byte before its timeout) is recorded `lost`, with a race
// event, as the win records an unknown sibling: on a succeeded job nothing
// would ever settle an `unknown` attempt (reconciliation reads only running
// and unknown jobs).
func TestKeptLoserWithUnknownEndIsLost(t *testing.T) {
	release := make(chan struct{})
	b := setup(t, race.Route{HedgeAfter: 10 * time.Millisecond, KeepLosers: true},
		provSpec{name: "primary", respond: func(int, *providers.Request) providers.Step {
			<-release // ends only after the hedge has won
			return providers.Step{Error: &providers.Error{Kind: providers.KindTimeout, OutcomeUnknown: true,
				Message: "no response byte before the first-byte timeout"}}
		}},
		provSpec{name: "fallback", respond: ok(validTriage)},
	)
	job := b.submit(t)
	if j := b.waitSettled(t, job.ID); j.State != store.JobSucceeded {
		t.Fatalf("job %s", j.State)
	}
	close(release)
	b.stop() // waits for the primary's end to be recorded
	j := b.job(t, job.ID)
	primary := attemptBy(j, "primary")
	if j.State != store.JobSucceeded || primary.State != store.AttemptLost {
		t.Fatalf("job %s, kept loser %s: want succeeded and lost", j.State, primary.State)
	}
	if len(j.RaceEvents) != 1 || *j.RaceEvents[0].AttemptID != primary.ID || j.RaceEvents[0].Kind != "lost" {
		t.Fatalf("race events %+v, want one lost event for the kept loser", j.RaceEvents)
	}
}
