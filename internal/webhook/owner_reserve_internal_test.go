package webhook

import (
	"testing"
	"time"
)

// Owners with deliveries in flight leave a reserve of the workers to owners
// with none: with 8 workers, 2 per owner and a reserve of 2, an owner with a
// delivery in flight is refused once 6 are in flight, though under its own
// limit, and waits as at its limit; an owner with nothing in flight still
// gets a slot. Found by review: without the reserve four owners whose
// endpoints hang held all 8.
func TestOwnerReserveKeptForOwnersWithNothingInFlight(t *testing.T) {
	if got := ownerReserve(8, 2); got != 2 {
		t.Fatalf("ownerReserve(8, 2) = %d, want 2", got)
	}
	s := &ownerSlots{limit: 2, shared: 8 - ownerReserve(8, 2)}
	t0 := time.Now()
	take := func(owner string, want bool) {
		t.Helper()
		ok, wait := s.acquire(owner, t0)
		if ok != want {
			t.Fatalf("%s: ok %t, want %t", owner, ok, want)
		}
		if !ok && (wait < ownerBusyMin || wait >= 2*ownerBusyMin) {
			t.Fatalf("%s refused, waiting %s; want [%s, %s) as at its limit", owner, wait, ownerBusyMin, 2*ownerBusyMin)
		}
	}
	for _, o := range []string{"a", "a", "b", "b", "c", "c"} {
		take(o, true)
	}
	take("d", true)  // nothing in flight: the reserve
	take("d", false) // under its limit, but only the reserve is left
	take("e", true)  // nothing in flight: the last of the reserve
	s.release("a", t0)
	take("d", false) // 7 in flight: the 6 shared are still taken
	s.release("e", t0)
	take("a", false) // 6 in flight
	s.release("b", t0)
	take("a", true) // 5 in flight: a shared slot is free
	if s.total != 6 {
		t.Fatalf("%d in flight, want 6", s.total)
	}
}

// The reserve is a quarter of the workers, at least one, and leaves every
// owner able to reach webhooks.max_inflight_per_owner: none when that is all
// the workers.
func TestOwnerReserveSize(t *testing.T) {
	for _, c := range []struct{ workers, perOwner, want int }{
		{100, 25, 25}, {100, 80, 20}, {100, 100, 0}, {4, 1, 1}, {2, 1, 1}, {1, 1, 0}, {8, 2, 2},
	} {
		if got := ownerReserve(c.workers, c.perOwner); got != c.want {
			t.Errorf("ownerReserve(%d, %d) = %d, want %d", c.workers, c.perOwner, got, c.want)
		}
	}
}
