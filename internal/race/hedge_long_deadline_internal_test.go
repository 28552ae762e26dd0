package race

import (
	"testing"
	"time"
)

// hedgeDelay bounds any hedge delay by ¾ of what is left of the job's
// deadline, computed as deadlineAt.Sub(from)*3/4: for a route deadline over
// about 97 years (MaxInt64/3 ns) the product overflows int64 and the bound
// comes out negative, so hedgeDelay returns a negative delay, which every
// caller (waiting, hedgeAgain) takes for "no hedging": the route's
// hedge_after — fixed or adaptive, on by default for 2+ targets (SPEC §15) —
// is silently never applied.
func TestHedgeDelayWithVeryLongDeadline(t *testing.T) {
	now := time.Now()
	o := &orchestrator{
		r:          &Runner{cfg: Config{Targets: map[string]*Target{"a": {Timeout: time.Minute, FirstByteTimeout: 30 * time.Second}}}},
		route:      &Route{Providers: []string{"a", "b"}, HedgeAfter: time.Second},
		deadlineAt: now.Add(876000 * time.Hour), // routes.<name>.deadline: 876000h (100 years), accepted at load
	}
	if d := o.hedgeDelay("a", now); d != time.Second {
		t.Fatalf("hedgeDelay = %s with hedge_after 1s and a 100-year deadline; want 1s (a negative delay means no hedge at all)", d)
	}
}
