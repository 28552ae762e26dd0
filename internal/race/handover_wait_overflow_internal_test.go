package race

import (
	"testing"
	"time"
)

// A runner built without a handover wait takes max(2m, 2 × lease), as the
// configuration's default: a lease above about 1281023h overflowed the
// doubling to a negative, and the wait became 2m, below the lease. Found by
// review.
func TestDefaultHandoverWaitDoesNotOverflow(t *testing.T) {
	for _, lease := range []time.Duration{30 * time.Second, time.Hour, 1500000 * time.Hour, time.Duration(1<<63 - 1)} {
		r := New(Config{Lease: lease})
		if want := max(2*time.Minute, lease); r.cfg.HandoverWait < want {
			t.Errorf("lease %s: handover wait %s, below %s", lease, r.cfg.HandoverWait, want)
		}
	}
}
