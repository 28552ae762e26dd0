package store_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/routerhq/router/internal/store"
)

// SettleJobAs is fenced by the job's orchestration lease, on the locked row:
// once another process has adopted the job (the first owner's lease expired),
// the first owner can no longer fail it under the adopter, with nothing in
// flight; the adopter can. A job that already ended answers its state to
// anyone, and a job whose lease nobody holds is nobody's to settle.
func TestSettleJobAsIsFencedByTheLease(t *testing.T) {
	b := setup(t)
	ctx := context.Background()
	j := leasedJob(t, b, "fenced", false)
	expireJobLease(t, b, j.ID)
	if ok, err := b.st.AcquireJobLease(ctx, j.ID, "replica-b", time.Hour); err != nil || !ok {
		t.Fatalf("adopt: ok=%v err=%v", ok, err)
	}
	if st, _, err := b.st.SettleJobAs(ctx, j.ID, "replica-a", "a's reason"); !errors.Is(err, store.ErrLeaseLost) {
		t.Fatalf("the former owner settled the adopted job: %q %v", st, err)
	}
	if st, err := b.st.JobStateAny(ctx, j.ID); err != nil || st != store.JobPending {
		t.Fatalf("job %s %v after the former owner's refused settlement, want pending", st, err)
	}
	if err := b.st.ReleaseJobLease(ctx, j.ID, "replica-b"); err != nil {
		t.Fatal(err)
	}
	if _, _, err := b.st.SettleJobAs(ctx, j.ID, "replica-b", "b's reason"); !errors.Is(err, store.ErrLeaseLost) {
		t.Fatalf("a job whose lease nobody holds was settled: %v", err)
	}
	if ok, err := b.st.AcquireJobLease(ctx, j.ID, "replica-b", time.Hour); err != nil || !ok {
		t.Fatalf("take again: ok=%v err=%v", ok, err)
	}
	if st, settled, err := b.st.SettleJobAs(ctx, j.ID, "replica-b", "b's reason"); err != nil || st != store.JobFailed || !settled {
		t.Fatalf("the lease's owner settling: %q settled=%v %v, want failed by this call", st, settled, err)
	}
	if st, settled, err := b.st.SettleJobAs(ctx, j.ID, "replica-a", "a's reason"); err != nil || st != store.JobFailed || settled {
		t.Fatalf("settling an ended job: %q settled=%v %v, want its state, no error, and not settled by this call", st, settled, err)
	}
	got, err := b.st.GetJobAny(ctx, j.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Error == nil || *got.Error != "b's reason" {
		t.Fatalf("job error %v, want the owner's reason", got.Error)
	}
}
