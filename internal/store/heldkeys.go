package store

import (
	"sync"
	"sync/atomic"
	"time"
)

// heldKeys remembers the idempotency keys whose claim found the key's row
// held by another transaction for longer than a claim waits for it (its
// batch's batchLockWait, then aloneLockWait alone: claimAlone), so that the
// next claims of such a key go alone at once (CreateJob), without holding up a
// batch first. The usual holder lasts (an operator's open transaction, a
// replica cut off mid-transaction), and a client told 503 busy with
// Retry-After sends the request again every second or two: each resend would
// otherwise cost a batch of other callers' claims and wins its lock wait and
// its split. A key is forgotten once a claim of it gets past the row (claimed,
// found, refused), or heldKeyMemory after a claim last found it held. A claim
// that gave up on its owner's max_live_jobs lock (ErrLiveLimitBusy) did not
// find its key's row held: the key is not remembered; its owner is, in a
// heldKeys of its own keyed by owner (group.heldOwners), and the owner's next
// claims that take that lock go alone at once in the same way, until one
// gets past it.
type heldKeys struct {
	n  atomic.Int64 // len(m): every claim asks (has), and m is almost always empty
	mu sync.Mutex
	m  map[string]time.Time // claim key (claimRequest.key) → when a claim last found it held
}

// heldKeyMemory is how long a key found held is remembered; heldKeysMax, how
// many keys at most (past it the expired ones are dropped, and if none is,
// all of them: a claim of a forgotten key only goes through its batch again).
const (
	heldKeyMemory = time.Minute
	heldKeysMax   = 1024
)

// has reports whether a claim recently found k's row held.
func (h *heldKeys) has(k string) bool {
	if h.n.Load() == 0 {
		return false
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	at, ok := h.m[k]
	if ok && time.Since(at) > heldKeyMemory {
		delete(h.m, k)
		h.n.Store(int64(len(h.m)))
		return false
	}
	return ok
}

// mark remembers that a claim found k's row held, now.
func (h *heldKeys) mark(k string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.m == nil {
		h.m = make(map[string]time.Time)
	}
	if _, ok := h.m[k]; !ok && len(h.m) >= heldKeysMax {
		for key, at := range h.m {
			if time.Since(at) > heldKeyMemory {
				delete(h.m, key)
			}
		}
		if len(h.m) >= heldKeysMax {
			clear(h.m)
		}
	}
	h.m[k] = time.Now()
	h.n.Store(int64(len(h.m)))
}

// forget drops k: a claim of it got past its row.
func (h *heldKeys) forget(k string) {
	if h.n.Load() == 0 {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	delete(h.m, k)
	h.n.Store(int64(len(h.m)))
}
