package race_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/routerhq/router/internal/race"
	"github.com/routerhq/router/internal/racetest"
	"github.com/routerhq/router/internal/store"
)

// SPEC §4.2: a live race whose target rejects the request as too long skips
// every target whose window is no larger, and its routing says so — as a
// race resumed after the rejection does (TestAdoptedJobSkipsWindowsTooSmall).
// (Found in review: the live race wrote the skip only into the job's error,
// and its routing went on calling the twin eligible.)
func TestLiveRaceRecordsWindowSkipsInRouting(t *testing.T) {
	b := racetest.New(t, racetest.Options{Providers: windowRoute(tooLong)})
	j := b.WaitSettled(t, b.Submit(t).ID)
	checkWindowSkips(t, b, j, "big")
	if n := b.Prov["twin"].Calls(); n != 0 {
		t.Fatalf("the twin was called %d times", n)
	}
}

// When the rejection leaves no target, the failed job's routing says why
// the twin was not tried.
func TestLiveRaceFailedByWindowSkipsRecordsThem(t *testing.T) {
	b := racetest.New(t, racetest.Options{Providers: windowRoute(tooLong)[:3]})
	j := b.WaitSettled(t, b.Submit(t).ID)
	if j.State != store.JobFailed {
		t.Fatalf("job %s, want failed: no target can take the request", j.State)
	}
	var routing []race.Decision
	if err := json.Unmarshal(j.Routing, &routing); err != nil {
		t.Fatalf("routing %s: %v", j.Routing, err)
	}
	found := false
	for _, d := range routing {
		if d.Provider == "twin" && d.Event == "" {
			found = true
			if d.Eligible || !strings.Contains(d.Reason, "context window too small: primary rejected the request as too long") {
				t.Errorf("routing of twin: eligible %v, reason %q; want not eligible, its window no larger than primary's", d.Eligible, d.Reason)
			}
		}
	}
	if !found {
		t.Fatalf("routing %s has no decision for twin", j.Routing)
	}
	if got := attemptProviders(t, b, j.ID); len(got) != 1 || got[0] != "primary" {
		t.Fatalf("attempts on %v, want only primary's", got)
	}
}
