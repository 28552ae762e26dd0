package race_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/routerhq/router/internal/race"
	"github.com/routerhq/router/internal/racetest"
	"github.com/routerhq/router/internal/store"
)

// dieAgainBeforeSend takes job jobID, which a dead router left `unknown`
// with an attempt it never sent, through what its next router does before
// it too dies before the send: reconciliation finds no record of the attempt
// (resolved as reconcileOne does), a replica adopts the job and marks a new
// attempt running, and its lease runs out (moved past on the database's
// clock).
func dieAgainBeforeSend(t *testing.T, b *racetest.Bundle, jobID, owner string) {
	t.Helper()
	ctx := context.Background()
	if _, err := b.Store.ExpireAttemptLeases(ctx); err != nil {
		t.Fatal(err)
	}
	j, err := b.Store.GetJobAny(ctx, jobID)
	if err != nil || j.State != store.JobUnknown {
		t.Fatalf("after lease expiry: job %v, err %v: want it unknown", j, err)
	}
	last := j.Attempts[len(j.Attempts)-1]
	resume, err := b.Store.ResolveAttempt(ctx, store.Resolution{JobID: jobID, Seq: last.Seq, Outcome: "failed", Note: store.NoRecordNote})
	if err != nil || !resume {
		t.Fatalf("resolve attempt %d with no record: resume %v, err %v: want it resumed", last.Seq, resume, err)
	}
	if ids, err := b.Store.ClaimOrphans(ctx, owner, time.Hour, 10, nil); err != nil || len(ids) != 1 || ids[0] != jobID {
		t.Fatalf("%s's adoption: %v, err %v", owner, ids, err)
	}
	a, err := b.Store.CreateAttempt(ctx, store.NewAttempt{JobID: jobID, Provider: last.Provider, Role: store.RolePrimary,
		LeaseOwner: owner, Orchestrator: owner, LeaseFor: time.Hour, Lookup: true}) // sent to be looked up, as its runner would
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Store.MarkAttemptRunning(ctx, a.ID); err != nil {
		t.Fatal(err)
	}
	// The router dies here. Its leases run out.
	if _, err := b.DB.Pool.Exec(ctx, `UPDATE attempts SET lease_expires_at = now() - interval '1 second' WHERE id = $1`, a.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := b.DB.Pool.Exec(ctx, `UPDATE jobs SET lease_expires_at = now() - interval '1 second' WHERE id = $1`, jobID); err != nil {
		t.Fatal(err)
	}
}

// A job whose handling kills its router before the send (a "query of
// death") was resumed by every reconciliation that found no record of its
// attempt, and adopted and started again without end: the router that
// recovered it the third time sent it (and, for a real query of death, died
// too). Now the leader's recovery fails it at its third router death
// (store.RouterDeathLimit) and does not run it again. Found by review
// (rrecov12, suspicion 3).
func TestRecoveryEndsJobWhoseRoutersKeepDying(t *testing.T) {
	b := setup(t, race.Route{}, provSpec{name: "primary", respond: ok(validTriage)})
	job := crashAfterClaim(t, b.Bundle) // death 1
	dieAgainBeforeSend(t, b.Bundle, job.ID, "dead-router-2")
	dieAgainBeforeSend(t, b.Bundle, job.ID, "dead-router-3")
	b.runner.RecoverOnce(context.Background(), 10) // expires the third, finds no record of it
	j := waitEnded(t, b.Bundle, job.ID)
	b.stop()
	if j.State != store.JobFailed || !store.EndedByRouterDeaths(j) {
		t.Fatalf("job %s (%s), attempts %s: want it failed for its routers' deaths, not run again", j.State, derefString(j.Error), attemptsOf(j))
	}
	if !strings.Contains(derefString(j.Error), "/retry") {
		t.Fatalf("reason %q: want it to say how to retry the job", derefString(j.Error))
	}
	if n := b.prov["primary"].Calls(); n != 0 {
		t.Fatalf("primary called %d times, want never: each router died before its send, and recovery must not send it a fourth time", n)
	}
}
