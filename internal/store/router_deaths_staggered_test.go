package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/routerhq/router/internal/store"
)

// One router death with a hedge in flight beside its primary, where the two
// attempts' leases run out on different recovery passes (the hedge was
// created after the keeper's last renewal, so its lease, set by its own
// MarkAttemptRunningFor, ends later than the primary's), is counted as two
// deaths: routerDeathsLocked counts distinct finished_at, and each expiry
// pass stamps its own now(). A second, ordinary death then fails the job
// "stopped 3 times" although its routers died twice.
func TestRouterDeathWithStaggeredHedgeLeaseCountsOnce(t *testing.T) {
	b := setup(t)
	ctx := context.Background()
	j := leasedJob(t, b, "staggered-hedge", true) // attempt 1: the primary, running
	primary := j.Attempts[0]
	hedge, err := b.st.CreateAttempt(ctx, store.NewAttempt{JobID: j.ID, Provider: "p2", Role: store.RoleHedge,
		LeaseOwner: "replica-a", Orchestrator: "replica-a", LeaseFor: time.Hour, MaxAttempts: 3})
	if err != nil {
		t.Fatal(err)
	}
	if err := b.st.MarkAttemptRunning(ctx, hedge.ID); err != nil {
		t.Fatal(err)
	}
	// replica-a dies before either request reached its provider. The
	// primary's lease (last renewed before the hedge started) runs out
	// first: one recovery pass expires it alone.
	if _, err := b.db.Pool.Exec(ctx, `UPDATE attempts SET lease_expires_at = now() - interval '1 second' WHERE id = $1`, primary.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := b.st.ExpireAttemptLeases(ctx); err != nil { // the primary alone: unknown, the job still running
		t.Fatal(err)
	}
	// The next pass, the hedge's lease has run out too: the job is unknown.
	time.Sleep(20 * time.Millisecond) // a later pass: another now()
	if _, err := b.db.Pool.Exec(ctx, `UPDATE attempts SET lease_expires_at = now() - interval '1 second' WHERE id = $1`, hedge.ID); err != nil {
		t.Fatal(err)
	}
	recoverExpired(t, b, j.ID)
	// Reconciliation finds no record of either request.
	if resolveNoRecord(t, b, j.ID, primary.Seq) {
		t.Fatal("resumed with the hedge still unknown")
	}
	if !resolveNoRecord(t, b, j.ID, hedge.Seq) {
		got, _ := b.st.GetJobAny(ctx, j.ID)
		t.Fatalf("after one router death the job was not resumed: %s (%s)", got.State, jobReason(got.Error))
	}
	// A second router death (adopted, started, dies before the send).
	if !adoptAndStart(t, b, j.ID, "replica-b", 1) {
		t.Fatal("the resumed job was not adopted")
	}
	got, resume := dieBeforeSend(t, b, j.ID)
	if !resume || got.State != store.JobRunning {
		t.Fatalf("after 2 router deaths (the first with a hedge whose lease ran out one pass later): job %s, resume %v, reason %q; "+
			"want it resumed (the limit is %d deaths)", got.State, resume, jobReason(got.Error), store.RouterDeathLimit)
	}
}

// The same with two hedges, each started a little after the one before and
// expired by its own recovery pass: a single router death fails the job
// "stopped 3 times" at once, and it is never run again.
func TestOneRouterDeathWithTwoStaggeredHedgesIsNotThreeDeaths(t *testing.T) {
	b := setup(t)
	ctx := context.Background()
	j := leasedJob(t, b, "staggered-hedges", true)
	ids := []string{j.Attempts[0].ID}
	for _, p := range []string{"p2", "p3"} {
		h, err := b.st.CreateAttempt(ctx, store.NewAttempt{JobID: j.ID, Provider: p, Role: store.RoleHedge,
			LeaseOwner: "replica-a", Orchestrator: "replica-a", LeaseFor: time.Hour, MaxAttempts: 3})
		if err != nil {
			t.Fatal(err)
		}
		if err := b.st.MarkAttemptRunning(ctx, h.ID); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, h.ID)
	}
	// replica-a dies; each attempt's lease runs out on its own recovery pass.
	for _, id := range ids {
		time.Sleep(20 * time.Millisecond)
		if _, err := b.db.Pool.Exec(ctx, `UPDATE attempts SET lease_expires_at = now() - interval '1 second' WHERE id = $1`, id); err != nil {
			t.Fatal(err)
		}
		if _, err := b.st.ExpireAttemptLeases(ctx); err != nil {
			t.Fatal(err)
		}
	}
	var resume bool
	for seq := 1; seq <= 3; seq++ {
		resume = resolveNoRecord(t, b, j.ID, seq)
	}
	got, err := b.st.GetJobAny(ctx, j.ID)
	if err != nil {
		t.Fatal(err)
	}
	if !resume || got.State != store.JobRunning {
		t.Fatalf("after ONE router death (a primary and two hedges in flight): job %s, resume %v, reason %q; want it resumed", got.State, resume, jobReason(got.Error))
	}
}
