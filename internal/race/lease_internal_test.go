package race

import (
	"slices"
	"testing"
	"time"
)

// Issue 11: a tick renews the leases of the jobs that have run for a third of
// a tick or more, in lock order; a job younger than that (its lease was just
// set, three ticks long) waits for the next tick, so that short jobs never
// cost a renewal. With no job left the keeper stops.
func TestLeasesDueSkipsJobsYoungerThanAThirdOfATick(t *testing.T) {
	now := time.Now()
	r := &Runner{keeping: true, running: map[string]runningJob{
		"c-old":   {since: now.Add(-5 * time.Second)},
		"a-third": {since: now.Add(-334 * time.Millisecond)},
		"b-new":   {since: now.Add(-10 * time.Millisecond)},
	}}
	ids, live := r.leasesDue(now, time.Second, false)
	if !live || !slices.Equal(ids, []string{"a-third", "c-old"}) {
		t.Fatalf("due %v (live %v), want [a-third c-old]: the job started 10ms ago is not due", ids, live)
	}
	ids, live = r.leasesDue(now.Add(time.Second), time.Second, false)
	if !live || !slices.Equal(ids, []string{"a-third", "b-new", "c-old"}) {
		t.Fatalf("a tick later: due %v, want all three", ids)
	}
	r.running = map[string]runningJob{}
	if ids, live = r.leasesDue(now, time.Second, false); live || ids != nil || r.keeping {
		t.Fatalf("no job left: due %v live %v keeping %v, want the keeper to stop", ids, live, r.keeping)
	}
}

// A job whose claim answered promptly waits for the keeper's next tick and
// wakes nothing; one whose claim answered so late that the next tick would
// come more than a tick and a third after the claim set its lease wakes the
// keeper, whose woken pass renews only that job, once.
func TestKeeperWokenOnlyForAJobThatCannotWaitForItsTick(t *testing.T) {
	now := time.Now()
	r := &Runner{cfg: Config{Lease: 3 * time.Second}, keeping: true, nextRenewal: now.Add(time.Second),
		running: map[string]runningJob{"old": {since: now.Add(-5 * time.Second)}}, wakeKeeper: make(chan struct{}, 1)}
	r.holdLease("prompt", nil, now.Add(-300*time.Millisecond)) // next tick 1.3s after its claim: in time
	select {
	case <-r.wakeKeeper:
		t.Fatal("a job whose claim answered promptly woke the keeper: it should wait for the next tick")
	default:
	}
	r.holdLease("late", nil, now.Add(-400*time.Millisecond)) // next tick 1.4s after its claim: too late
	select {
	case <-r.wakeKeeper:
	default:
		t.Fatal("a job whose next renewal would come 1.4 ticks after its claim did not wake the keeper")
	}
	if ids, live := r.leasesDue(now, time.Second, true); !live || !slices.Equal(ids, []string{"late"}) {
		t.Fatalf("the woken pass renews %v (live %v), want only [late]", ids, live)
	}
	if ids, _ := r.leasesDue(now, time.Second, true); len(ids) != 0 {
		t.Fatalf("a second woken pass renews %v, want none: the late job was renewed already", ids)
	}
	if ids, _ := r.leasesDue(now.Add(time.Second), time.Second, false); !slices.Equal(ids, []string{"late", "old", "prompt"}) {
		t.Fatalf("the next tick renews %v, want all three", ids)
	}
	if want := now.Add(2 * time.Second); !r.nextRenewal.Equal(want) {
		t.Fatalf("after a tick the next one is recorded at %v, want a tick later (%v)", r.nextRenewal, want)
	}
}
