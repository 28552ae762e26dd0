package store

import (
	"errors"
	"testing"
	"time"
)

// Alone turns were shared by claims and wins. The claims that fill
// them are the ones any tenant's client creates at will: every resend of a
// key (or owner) found held goes alone at once (heldKeys, heldOwners) and
// keeps its turn for its whole wait on the held row (aloneLockWait; twice for
// a limited owner). A win has no such resend: it is an answer already
// received and paid for, and OfferCompletion is documented never to give it
// up because its caller went away. Here every turn is taken (as
// TestAloneClaimsOfHeldKeysTakeTheWholePool shows claims of held keys take
// them), and a win that its batch found briefly blocked (a cancellation's
// short transaction on its job row) goes alone: it is not sent at all, for
// want of a turn, though its own row is free. After OfferCompletion's four
// alone tries it ends ErrBusy, the valid answer is dropped and the attempt
// stays in flight until its lease expires (recovery may then pay for the
// call again). Wins now take turns of their own (aloneOwed).
//
// The store has no pool: a win that is sent panics on it, which the test
// takes as "sent".
func TestWinAloneNotStarvedByClaimsHoldingEveryTurn(t *testing.T) {
	defer SetAloneLockWait(time.Millisecond)()
	s := New(nil, Options{})
	for range cap(s.alone.slots) { // every turn held by claims waiting on other tenants' held keys
		s.alone.slots <- struct{}{}
	}
	req := &winRequest{c: Completion{JobID: "job", AttemptID: "att"}, done: make(chan struct{})}
	sent := func() (sent bool) {
		defer func() {
			if recover() != nil {
				sent = true // it reached the (absent) pool: the win was sent
			}
		}()
		s.winAlone(req)
		return false
	}()
	if !sent {
		t.Fatalf("a win run alone while claims hold every alone turn (%d) was not sent: err %v (no turn: %v); "+
			"a paid answer is dropped for other tenants' resends of held keys", cap(s.alone.slots), req.err, errors.Is(req.err, errNoAloneTurn))
	}
}
