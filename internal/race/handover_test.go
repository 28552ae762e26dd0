package race_test

import (
	"context"
	"testing"
	"time"

	"github.com/routerhq/router/internal/race"
	"github.com/routerhq/router/internal/store"
)

// A job created (with its first attempt) just as its runner stops is never
// sent: the attempt says so, and the job is free at once for another replica
// instead of waiting for a lease to expire and turning unknown.
func TestJobCreatedWhileStoppingIsHandedOver(t *testing.T) {
	b := setup(t, race.Route{}, provSpec{name: "primary", respond: ok(validTriage)})
	b.stop()
	job := b.submit(t)
	j := b.job(t, job.ID)
	if len(j.Attempts) != 1 || j.Attempts[0].State != store.AttemptCancelled {
		t.Fatalf("attempts %+v, want the unsent first attempt cancelled", j.Attempts)
	}
	if b.Prov["primary"].Calls() != 0 {
		t.Fatal("a stopping runner sent the attempt")
	}
	ids, err := b.Store.ClaimOrphans(context.Background(), "other-replica", time.Minute, 10)
	if err != nil || len(ids) != 1 || ids[0] != job.ID {
		t.Fatalf("orphans claimable by another replica: %v (%v), want the job at once", ids, err)
	}
}
