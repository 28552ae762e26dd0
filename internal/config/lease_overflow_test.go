package config

import (
	"strings"
	"testing"
)

// handover_wait must be at least twice execution.lease (docs/configuration.md);
// its default is max(2m, 2 × lease). A lease above about 1281023h — within
// the durations the router holds (2562047h) — makes 2 × lease overflow to a
// negative: the default became 2m and the check passed, so the recovery
// leader failed, after 2 minutes, jobs the other replicas would adopt only
// after the lease. The load refuses a lease over MaxLease, naming the
// setting and the bound; it never accepts handover_wait below the lease.
// Found by review.
func TestHugeLeaseDoesNotOverflowHandoverWait(t *testing.T) {
	t.Setenv("DATABASE_URL", "")
	base := "providers:\n  - {name: a, type: scripted}\nroutes:\n  r: {providers: [a]}\n"
	for _, y := range []string{
		base + "execution: {lease: 1500000h}\n",
		base + "execution: {lease: 1500000h, handover_wait: 2m}\n",
	} {
		c, err := Parse([]byte(y))
		if err != nil {
			if !strings.Contains(err.Error(), "execution.lease (1500000h0m0s) must be at most 24h") {
				t.Errorf("the refusal does not name execution.lease and its maximum: %v", err)
			}
			continue
		}
		if lease, wait := c.Execution.Lease.D(), c.Execution.HandoverWait.D(); wait < lease {
			t.Errorf("accepted execution.lease %s with handover_wait %s (below the lease, let alone twice it):\n%s", lease, wait, y)
		}
	}
}
