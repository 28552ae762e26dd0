package store

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

// A claim sent alone (its key's row, or its owner's max_live_jobs lock, is
// remembered held) that finds every alone turn taken and none freed within
// its wait is not sent: the store has no pool here, and the claim is
// answered busy naming what sent it alone — not a lost answer (no hand-over)
// and not run again.
func TestClaimWithNoAloneTurnIsBusyAndNotSent(t *testing.T) {
	defer SetAloneLockWait(time.Millisecond)()
	for _, c := range []struct {
		name  string
		nj    NewJob
		mark  func(s *Store)
		owner bool
	}{
		{"held key", NewJob{Owner: "acme", Operation: "triage", IdempotencyKey: "k"},
			func(s *Store) { s.paths.held.mark("acme\x00triage\x00k") }, false},
		{"held owner", NewJob{Owner: "acme", Operation: "triage", IdempotencyKey: "k", MaxLive: 10},
			func(s *Store) { s.paths.heldOwners.mark("acme") }, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := New(nil, Options{}) // no pool: a claim that touched it would panic
			for range cap(s.alone.slots) {
				s.alone.slots <- struct{}{}
			}
			s.paths.onQueued = func(int) { t.Fatal("the claim went through the shared batches") }
			c.mark(s)
			_, _, err := s.CreateJob(context.Background(), c.nj)
			var be *BusyError
			if !errors.As(err, &be) || !errors.Is(err, errNoAloneTurn) || errors.Is(err, ErrLiveLimitBusy) != c.owner {
				t.Fatalf("err %v; want a *BusyError wrapping errNoAloneTurn (ErrLiveLimitBusy: %v)", err, c.owner)
			}
			if want := map[bool]string{false: `Idempotency-Key "k"`, true: "max_live_jobs check of owner acme"}[c.owner]; !strings.Contains(be.What, want) {
				t.Fatalf("busy names %q; want %q", be.What, want)
			}
			if n := s.lostClaims.Load(); n != 0 {
				t.Fatalf("%d claims handed over as lost; want none: nothing was sent", n)
			}
		})
	}
}
