package race_test

import (
	"context"
	"testing"

	"github.com/routerhq/router/internal/race"
	"github.com/routerhq/router/internal/store"
)

// A router that died between its claim's commit and the send left the first
// attempt to expire (lease_expired); reconciliation's lookup found that the
// provider never got it and resolved it `failed`. That attempt still counted
// against max_attempts: on max_attempts 1 the resumed job failed ("1
// attempts made") after no provider call at all, although SPEC §6.8 starts
// such a job exactly once. An attempt its provider provably never worked on
// now counts as one never sent. Found by review; it replaces
// TestCrashAfterClaimRedispatchRespectsMaxAttempts, which asserted the
// failure.
func TestCrashBeforeFirstSendIsStartedOnceWithMaxAttemptsOne(t *testing.T) {
	b := setup(t, race.Route{MaxAttempts: 1}, provSpec{name: "primary", respond: ok(validTriage)})
	job := crashAfterClaim(t, b.Bundle)
	b.runner.RecoverOnce(context.Background(), 10)
	j := waitEnded(t, b.Bundle, job.ID)
	b.stop()
	if j.State != store.JobSucceeded || len(j.Attempts) != 2 || !store.Unworked(j.Attempts[0]) {
		t.Fatalf("job %s (%s), attempts %s: want the unworked first attempt, then one that won", j.State, derefString(j.Error), attemptsOf(j))
	}
	if n := b.prov["primary"].Calls(); n != 1 {
		t.Fatalf("primary called %d times, want exactly once", n)
	}
}

// The router's error kind for an attempt its shutdown cut is the one the
// store's count of unworked attempts matches (store.Unworked).
func TestShutdownKindIsUnworkedKind(t *testing.T) {
	a := store.Attempt{State: store.AttemptFailed,
		Error: []byte(`{"kind": "` + string(race.KindShutdown) + `", "resolution": {"message": "` + store.NoRecordNote + `"}}`)}
	if !store.Unworked(a) {
		t.Fatalf("an attempt of kind %q resolved with no record is not unworked: the store and the race disagree on the kind", race.KindShutdown)
	}
}
