package store_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/routerhq/router/internal/store"
)

// dieBeforeSend is a router that dies with every attempt it has of job jobID
// started and none sent: their leases are moved past on the database's clock,
// recovery's expiry makes them `unknown` (lease_expired), and reconciliation's
// lookup finds no record of any of them (resolveNoRecord). It returns the job
// as the last resolution left it and whether that resolution resumed it.
func dieBeforeSend(t *testing.T, b *bundle, jobID string) (*store.Job, bool) {
	t.Helper()
	ctx := context.Background()
	if _, err := b.db.Pool.Exec(ctx, `UPDATE attempts SET lease_expires_at = now() - interval '1 second'
		WHERE job_id = $1 AND state IN ('starting', 'running')`, jobID); err != nil {
		t.Fatal(err)
	}
	recoverExpired(t, b, jobID)
	j, err := b.st.GetJobAny(ctx, jobID)
	if err != nil {
		t.Fatal(err)
	}
	var resume bool
	for _, a := range j.Attempts {
		if a.State == store.AttemptUnknown {
			resume = resolveNoRecord(t, b, jobID, a.Seq)
		}
	}
	if j, err = b.st.GetJobAny(ctx, jobID); err != nil {
		t.Fatal(err)
	}
	return j, resume
}

// adoptAndStart is a replica's recovery adopting job jobID (ClaimOrphans) and
// starting n attempts of it, each marked running (a hedge beside its primary
// when n is 2). It reports whether the job was adopted.
func adoptAndStart(t *testing.T, b *bundle, jobID, owner string, n int) bool {
	t.Helper()
	ctx := context.Background()
	ids, err := b.st.ClaimOrphans(ctx, owner, time.Hour, 10, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(ids, jobID) {
		return false
	}
	for i := range n {
		role := store.RolePrimary
		if i > 0 {
			role = store.RoleHedge
		}
		a, err := b.st.CreateAttempt(ctx, store.NewAttempt{JobID: jobID, Provider: "p1", Role: role,
			LeaseOwner: owner, Orchestrator: owner, LeaseFor: time.Hour, MaxAttempts: n})
		if err != nil {
			t.Fatalf("%s's attempt %d of the adopted job: %v", owner, i+1, err)
		}
		if err := b.st.MarkAttemptRunning(ctx, a.ID); err != nil {
			t.Fatal(err)
		}
	}
	return true
}

// A job whose handling kills its router after its attempt is marked running
// and before the send (a "query of death": out of memory building a huge
// request, a crash in an adapter's encoding) left an attempt that expired
// lease_expired, which reconciliation resolved `failed` with no record:
// unworked, it counted neither against max_attempts (1 here) nor as its
// target tried, and the resumed run had a deadline of its own. So the job was
// resumed, adopted and started again by replica after replica, without end,
// each one dying in turn. The store now fails it at the resolution of its
// RouterDeathLimit-th death in a round, with a reason that says what
// happened and what to do. Found by review (rrecov12, suspicion 3).
func TestRouterDeathsBeforeSendEndTheJob(t *testing.T) {
	b := setup(t)
	j := leasedJob(t, b, "query-of-death", true) // the claim's first attempt, running
	const tries = 10
	deaths := 0
	for deaths < tries {
		var resume bool
		j, resume = dieBeforeSend(t, b, j.ID)
		deaths++
		if j.State != store.JobRunning || !resume {
			break
		}
		if !adoptAndStart(t, b, j.ID, "replica-"+string(rune('a'+deaths)), 1) {
			t.Fatalf("after router death %d the job was resumed but no replica could adopt it", deaths)
		}
	}
	if deaths != store.RouterDeathLimit || j.State != store.JobFailed {
		t.Fatalf("after %d router deaths before the send the job is %s (%d attempts): want it failed at death %d, not adopted and started again",
			deaths, j.State, len(j.Attempts), store.RouterDeathLimit)
	}
	if !store.EndedByRouterDeaths(j) {
		t.Errorf("store.EndedByRouterDeaths is false for the job failed at the limit")
	}
	reason := jobReason(j.Error)
	for _, want := range []string{"stopped 3 times", "attempts 1, 2 and 3", "lease_expired", "POST /v1/jobs/" + j.ID + "/retry"} {
		if !strings.Contains(reason, want) {
			t.Errorf("the failed job's reason %q does not contain %q", reason, want)
		}
	}
	if adoptAndStart(t, b, j.ID, "replica-z", 1) {
		t.Fatal("the failed job was adopted again")
	}

	// The caller's retry, once the cause is fixed, starts a new round with a
	// bound of its own: the next death resumes the job.
	if err := b.st.RetryJob(context.Background(), "acme", j.ID); err != nil {
		t.Fatal(err)
	}
	if !adoptAndStart(t, b, j.ID, "replica-r", 1) {
		t.Fatal("the retried job was not adopted")
	}
	if j, resume := dieBeforeSend(t, b, j.ID); !resume || j.State != store.JobRunning {
		t.Fatalf("the retried job's first router death: job %s (%s), resume %v: want it resumed (a new round)",
			j.State, jobReason(j.Error), resume)
	}
}

// One death of a router that had a hedge in flight beside its primary leaves
// two unworked attempts: it is still one death (RouterDeathLimit counts
// deaths, not attempts).
func TestRouterDeathWithHedgeCountsOnce(t *testing.T) {
	b := setup(t)
	j := leasedJob(t, b, "query-of-death-hedged", true)
	for death := 1; death < store.RouterDeathLimit; death++ {
		j, resume := dieBeforeSend(t, b, j.ID)
		if !resume || j.State != store.JobRunning {
			t.Fatalf("router death %d: job %s (%s), resume %v: want it resumed", death, j.State, jobReason(j.Error), resume)
		}
		if !adoptAndStart(t, b, j.ID, "replica-"+string(rune('a'+death)), 2) {
			t.Fatalf("after router death %d the job was not adopted", death)
		}
	}
	j, _ = dieBeforeSend(t, b, j.ID)
	if j.State != store.JobFailed || !strings.Contains(jobReason(j.Error), "stopped 3 times") {
		t.Fatalf("after %d router deaths, the last two with a hedge: job %s (%s): want it failed, counting 3 deaths",
			store.RouterDeathLimit, j.State, jobReason(j.Error))
	}
}

// jobReason is the job's error ("" when it has none).
func jobReason(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}
