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
	ids, _, live := r.leasesDue(now, time.Second, false)
	if !live || !slices.Equal(ids, []string{"a-third", "c-old"}) {
		t.Fatalf("due %v (live %v), want [a-third c-old]: the job started 10ms ago is not due", ids, live)
	}
	ids, _, live = r.leasesDue(now.Add(time.Second), time.Second, false)
	if !live || !slices.Equal(ids, []string{"a-third", "b-new", "c-old"}) {
		t.Fatalf("a tick later: due %v, want all three", ids)
	}
	r.running = map[string]runningJob{}
	if ids, _, live = r.leasesDue(now, time.Second, false); live || ids != nil || r.keeping {
		t.Fatalf("no job left: due %v live %v keeping %v, want the keeper to stop", ids, live, r.keeping)
	}
}

// A job whose claim answered promptly waits for the keeper's next tick and
// wakes nothing; one whose claim answered so late that the next tick would
// come more than a tick and a third after the claim set its lease wakes the
// keeper, whose woken pass renews only that job. Every pass, a tick's too,
// lists it as urgent (renewed waiting for held rows) until a renewal of it
// succeeded (noteRenewed with it among the urgent jobs).
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
	if due, urgent, live := r.leasesDue(now, time.Second, true); !live || len(due) != 0 || !slices.Equal(urgent, []string{"late"}) {
		t.Fatalf("the woken pass renews %v and urgently %v (live %v), want only [late], urgently", due, urgent, live)
	}
	// Its renewal failed: the mark stays, and the tick takes it as urgent.
	if due, urgent, _ := r.leasesDue(now.Add(time.Second), time.Second, false); !slices.Equal(due, []string{"old", "prompt"}) || !slices.Equal(urgent, []string{"late"}) {
		t.Fatalf("the tick after a failed urgent renewal renews %v and urgently %v, want [old prompt] and urgently [late]: "+
			"a tick's renewal skips held rows, so the job whose lease runs out before the next tick must stay urgent", due, urgent)
	}
	if want := now.Add(2 * time.Second); !r.nextRenewal.Equal(want) {
		t.Fatalf("after a tick the next one is recorded at %v, want a tick later (%v)", r.nextRenewal, want)
	}
	r.noteRenewed(now, nil, []string{"late"})
	if due, urgent, _ := r.leasesDue(now.Add(time.Second), time.Second, true); len(due) != 0 || len(urgent) != 0 {
		t.Fatalf("a woken pass after the urgent renewal succeeded renews %v and urgently %v, want none", due, urgent)
	}
	if due, urgent, _ := r.leasesDue(now.Add(2*time.Second), time.Second, false); !slices.Equal(due, []string{"late", "old", "prompt"}) || len(urgent) != 0 {
		t.Fatalf("the next tick renews %v and urgently %v, want all three, none urgently", due, urgent)
	}
}

// An urgent job whose waiting renewals keep failing (a dead database, a row
// held for long) is tried urgentTries times, then left to the ticks, which
// renew it as any other (skipping held rows): the retries are bounded.
func TestUrgentMarkEndsAfterItsTries(t *testing.T) {
	now := time.Now()
	r := &Runner{cfg: Config{Lease: 3 * time.Second}, keeping: true, nextRenewal: now.Add(time.Second),
		running: map[string]runningJob{}, wakeKeeper: make(chan struct{}, 1)}
	r.holdLease("late", nil, now.Add(-400*time.Millisecond))
	for try := 1; try < urgentTries; try++ {
		if again, given := r.noteUrgentFailed([]string{"late"}); again != 1 || given != 0 {
			t.Fatalf("after %d failed urgent renewals: %d to try again, %d given up; want 1 and 0", try, again, given)
		}
		if _, urgent, _ := r.leasesDue(now, time.Second, true); !slices.Equal(urgent, []string{"late"}) {
			t.Fatalf("after %d failed urgent renewals a woken pass renews urgently %v, want [late]", try, urgent)
		}
	}
	if again, given := r.noteUrgentFailed([]string{"late"}); again != 0 || given != 1 {
		t.Fatalf("after %d failed urgent renewals: %d to try again, %d given up; want 0 and 1", urgentTries, again, given)
	}
	due, urgent, _ := r.leasesDue(now.Add(time.Second), time.Second, false)
	if !slices.Equal(due, []string{"late"}) || len(urgent) != 0 {
		t.Fatalf("the tick after the urgent renewals were given up renews %v and urgently %v, want [late], none urgently", due, urgent)
	}
}
