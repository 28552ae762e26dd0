package api

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/routerhq/router/internal/store"
)

// createLive creates a pending (live) job of owner under key and returns its id.
func (c *storeCount) createLive(t *testing.T, owner, key string) string {
	t.Helper()
	input := json.RawMessage(`{"k":"` + key + `"}`)
	fp, _ := store.Fingerprint("op", "", "", input)
	job, _, err := c.CreateJob(context.Background(), store.NewJob{Owner: owner, Operation: "op", IdempotencyKey: key,
		Fingerprint: fp, Route: "default", Input: input})
	if err != nil {
		t.Fatal(err)
	}
	return job.ID
}

// end makes the job terminal (cancelled).
func (c *storeCount) end(t *testing.T, owner, id string) {
	t.Helper()
	if err := c.CancelJob(context.Background(), owner, id); err != nil {
		t.Fatal(err)
	}
}

// noRead fails the test when the count was read since the last read taken
// from c.seen.
func noRead(t *testing.T, c *storeCount, what string) {
	t.Helper()
	select {
	case n := <-c.seen:
		t.Fatalf("%s read the count (%d)", what, n)
	default:
	}
}

// An owner at max_live_jobs on jobs this replica created since the last read
// of the count, which have ended without this replica seeing it (their
// callers did not wait), is not refused on them: a refusal reads the count
// again first, at most once per recheck interval (a tenth of the refresh),
// not on every refused request. (Found by review: they were counted until
// the next refresh, and the 429 said the owner had that many live jobs.)
func TestLiveLimitRereadsBeforeRefusingOnJobsCreatedSince(t *testing.T) {
	r := newOverlapRig(t) // max_live_jobs 2, refresh 1 s
	ctx := context.Background()
	var ids []string
	for _, key := range []string{"a", "b"} {
		done, ok, _, err := r.l.admitLive(ctx, "acme")
		if err != nil || !ok {
			t.Fatalf("job %s: admitted %v, %v", key, ok, err)
		}
		ids = append(ids, r.count.createLive(t, "acme", key))
		done(true)
	}
	if n := lastRead(t, r.count); n != 0 {
		t.Fatalf("the first read saw %d", n)
	}
	for _, id := range ids {
		r.count.end(t, "acme", id)
	}
	_, ok, limit, err := r.l.admitLive(ctx, "acme")
	if err != nil || ok || limit != 2 {
		t.Fatalf("at once: admitted %v (limit %d, err %v); want refused on this replica's count, unread", ok, limit, err)
	}
	noRead(t, r.count, "a refusal within the recheck interval")
	r.mu.Lock()
	r.clock = r.clock.Add(r.l.recheck()) // still within the refresh interval
	r.mu.Unlock()
	done, ok, _, err := r.l.admitLive(ctx, "acme")
	if err != nil || !ok {
		t.Fatalf("refused (err %v) on 2 jobs that have ended, the recheck interval after the last read", err)
	}
	done(false)
	if n := lastRead(t, r.count); n != 0 {
		t.Fatalf("the second read saw %d", n)
	}
}

// A job that this replica saw end is taken off its owner's count: exactly
// (no read) when the count has not been read since its creation, and by a
// read before the next refusal when that read may have counted it live.
func TestLiveLimitJobSeenToEndIsNotCounted(t *testing.T) {
	r := newOverlapRig(t) // max_live_jobs 2, refresh 1 s
	ctx := context.Background()
	admit := func(what, key string) (ended func(), id string) {
		t.Helper()
		done, refused, err := r.l.admit(ctx, "acme", "")
		if err != nil || refused != nil {
			t.Fatalf("%s: refused %+v, %v", what, refused, err)
		}
		id = r.count.createLive(t, "acme", key)
		return done(true), id
	}
	endA, idA := admit("job a", "a")
	<-r.count.seen // the first read
	_, idB := admit("job b", "b")
	r.count.end(t, "acme", idA)
	endA() // seen to end: only this replica counted it
	endC, idC := admit("job c, as a has ended", "c")
	noRead(t, r.count, "an admission after a job was seen to end")
	// Read again (the refresh passes) while b and c are live: the read
	// counts them, and this replica's own count of them is dropped.
	r.refreshPasses()
	if _, refused, err := r.l.admit(ctx, "acme", ""); err != nil || refused == nil {
		t.Fatalf("with b and c live: refused %v, %v", refused, err)
	}
	if n := lastRead(t, r.count); n != 2 {
		t.Fatalf("the read after the refresh saw %d", n)
	}
	r.count.end(t, "acme", idC)
	endC() // the read counted c: the next refusal reads again, not at once
	if _, refused, err := r.l.admit(ctx, "acme", ""); err != nil || refused == nil {
		t.Fatalf("within the recheck interval: refused %v, %v", refused, err)
	}
	noRead(t, r.count, "a refusal within the recheck interval")
	r.mu.Lock()
	r.clock = r.clock.Add(r.l.recheck())
	r.mu.Unlock()
	done, refused, err := r.l.admit(ctx, "acme", "")
	if err != nil || refused != nil {
		t.Fatalf("refused (%+v, %v) though c, counted by the last read, has ended", refused, err)
	}
	done(false)
	if n := lastRead(t, r.count); n != 1 {
		t.Fatalf("the read after c ended saw %d", n)
	}
	_ = idB
}

// recheck is a tenth of the refresh interval, at least a millisecond.
func TestLiveLimitRecheckInterval(t *testing.T) {
	for refresh, want := range map[time.Duration]time.Duration{time.Second: 100 * time.Millisecond, time.Millisecond: time.Millisecond} {
		if got := newLimiter(Limits{}, nil, refresh, nil).recheck(); got != want {
			t.Errorf("refresh %v: recheck %v, want %v", refresh, got, want)
		}
	}
}
