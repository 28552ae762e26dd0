package race

import (
	"context"
	"testing"
	"time"
)

// An attempt is sent only while its lease, as this process set it, has more
// than its margin left on this process's monotonic clock; an attempt whose
// lease time was not recorded is not checked.
func TestLeaseRanOutCountsFromWhenTheLeaseWasSet(t *testing.T) {
	const lease = time.Minute
	r := &Runner{cfg: Config{Lease: lease}}
	if ranOut, _ := r.leaseRanOut(context.Background()); ranOut {
		t.Fatal("an attempt without the time its lease was set: checked, want it not checked")
	}
	if ranOut, _ := r.leaseRanOut(withLeaseSet(context.Background(), time.Time{})); ranOut {
		t.Fatal("a zero time: checked, want it carried as none")
	}
	if ranOut, held := r.leaseRanOut(withLeaseSet(context.Background(), time.Now())); ranOut {
		t.Fatalf("a lease set just now (held %s): ran out, want it sendable", held)
	}
	margin := leaseSendMargin(lease)
	if ranOut, held := r.leaseRanOut(withLeaseSet(context.Background(), time.Now().Add(-(lease - margin)))); !ranOut || held < lease-margin {
		t.Fatalf("a lease set %s ago (lease %s, margin %s): ran out %v, want it refused", held, lease, margin, ranOut)
	}
}
