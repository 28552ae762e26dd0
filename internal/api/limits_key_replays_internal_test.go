package api

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"
)

// The admissions in flight under one idempotency key hold one place of
// max_live_jobs while none of them has created the key's job, and none once
// one has: the others can only replay it. Whichever of them creates the job,
// and in whatever order they end, the owner's count comes back to the jobs
// created alone — no place is kept, none given back twice — also when they
// are admitted and end concurrently (go test -race).
func TestLiveKeyAdmissionsHoldOnePlace(t *testing.T) {
	count := newStoreCount(t)
	ctx := context.Background()
	for _, c := range []struct {
		name    string
		n       int
		creator int // which admission creates the key's job (its done first); -1: none does
	}{
		{"first creates", 3, 0},
		{"last creates", 3, 2},
		{"none creates", 3, -1},
		{"alone", 1, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			l := newLimiter(Limits{MaxLiveJobs: 2}, nil, time.Hour, count)
			key := liveKey("op", "k")
			var dones []liveDone
			for i := range c.n {
				done, refused, err := l.admit(ctx, "acme", key)
				if err != nil || refused != nil {
					t.Fatalf("admission %d under the key: %v %+v", i, err, refused)
				}
				dones = append(dones, done)
			}
			o := l.of("acme")
			check := func(when string, creating, admitted int) {
				t.Helper()
				o.mu.Lock()
				defer o.mu.Unlock()
				if got := o.creating(); got != creating || o.admitted != admitted || o.replays < 0 {
					t.Fatalf("%s: creating %d (inflight %d, replays %d), admitted %d; want creating %d, admitted %d",
						when, got, o.inflight, o.replays, o.admitted, creating, admitted)
				}
			}
			check("all in flight", 1, 0)
			// Another intent of the owner is admitted beside them.
			other, refused, err := l.admit(ctx, "acme", liveKey("op", "other"))
			if err != nil || refused != nil {
				t.Fatalf("another key, with one key in flight of max_live_jobs 2: %v %+v", err, refused)
			}
			other(false)
			created := 0
			if c.creator >= 0 {
				dones[c.creator](true)
				created = 1
				check("the key's job created", 0, 1)
			}
			for i, done := range dones {
				if i != c.creator {
					done(false)
				}
			}
			check("all ended", 0, created)
			o.mu.Lock()
			defer o.mu.Unlock()
			if o.inflight != 0 || o.replays != 0 || len(o.keys) != 0 {
				t.Fatalf("all ended: inflight %d, replays %d, keys %v", o.inflight, o.replays, o.keys)
			}
		})
	}

	t.Run("concurrent", func(t *testing.T) {
		l := newLimiter(Limits{MaxLiveJobs: 2}, nil, time.Hour, count)
		var wg sync.WaitGroup
		for k := range 4 {
			for i := range 8 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					done, refused, err := l.admit(ctx, "acme", liveKey("op", fmt.Sprint("k", k)))
					if err != nil {
						t.Error(err)
						return
					}
					if refused == nil {
						done(i == 3) // one of each key's may create
					}
				}()
			}
		}
		wg.Wait()
		o := l.of("acme")
		o.mu.Lock()
		defer o.mu.Unlock()
		if o.inflight != 0 || o.replays != 0 || len(o.keys) != 0 || o.admitted > 2 {
			t.Fatalf("all ended: inflight %d, replays %d, keys %d, admitted %d (max_live_jobs 2)", o.inflight, o.replays, len(o.keys), o.admitted)
		}
	})
}
