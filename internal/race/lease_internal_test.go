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
	ids, live := r.leasesDue(now, time.Second)
	if !live || !slices.Equal(ids, []string{"a-third", "c-old"}) {
		t.Fatalf("due %v (live %v), want [a-third c-old]: the job started 10ms ago is not due", ids, live)
	}
	ids, live = r.leasesDue(now.Add(time.Second), time.Second)
	if !live || !slices.Equal(ids, []string{"a-third", "b-new", "c-old"}) {
		t.Fatalf("a tick later: due %v, want all three", ids)
	}
	r.running = map[string]runningJob{}
	if ids, live = r.leasesDue(now, time.Second); live || ids != nil || r.keeping {
		t.Fatalf("no job left: due %v live %v keeping %v, want the keeper to stop", ids, live, r.keeping)
	}
}
