package tokens

import (
	"fmt"
	"strings"
	"testing"
)

// One owner counting many long texts (a tenant sending distinct documents)
// must not empty the cache of every other owner's counts: the cache was
// cleared whole once full, so one tenant's traffic made every other tenant's
// system prompts be counted anew (about 2 µs a token each). An owner over its
// share loses its own counts; the others' stay.
func TestOneOwnerCannotEmptyTheCountCache(t *testing.T) {
	victim := strings.Repeat("You are a support triage assistant. ", 10)
	if _, err := CountTextFor("victim", Cl100kBase, victim); err != nil {
		t.Fatal(err)
	}
	if !Cached("victim", Cl100kBase, victim) {
		t.Fatal("precondition: the victim's count is cached")
	}
	for i := range cacheEntries + 10 {
		text := fmt.Sprintf("%06d %s", i, strings.Repeat("y", cacheMinBytes))
		if _, err := CountTextFor("flood", Cl100kBase, text); err != nil {
			t.Fatal(err)
		}
	}
	if !Cached("victim", Cl100kBase, victim) {
		t.Fatal("one owner's counts emptied another owner's from the cache")
	}
	counts.Lock()
	n, flood := len(counts.m), counts.owned[ownedBy("flood").owner]
	counts.Unlock()
	if n > cacheEntries || flood > ownerEntries {
		t.Fatalf("the cache holds %d counts, %d of them the flooding owner's; want at most %d and %d", n, flood, cacheEntries, ownerEntries)
	}
	// The flooding owner still has a cache: its latest count is in it.
	last := fmt.Sprintf("%06d %s", cacheEntries+9, strings.Repeat("y", cacheMinBytes))
	if !Cached("flood", Cl100kBase, last) {
		t.Fatal("the flooding owner's last count is not cached")
	}
}

// The share bounds an owner only against the others: a router with one
// tenant keeps more than a share of its counts (found by review: one
// owner's 600 texts kept 88 of them, the rest of the cache unused).
func TestOneOwnerAloneHasTheWholeCountCache(t *testing.T) {
	counts.Lock()
	clear(counts.m)
	clear(counts.owned)
	counts.Unlock()
	const n = ownerEntries + 88
	text := func(i int) string { return fmt.Sprintf("%06d %s", i, strings.Repeat("z", cacheMinBytes)) }
	for i := range n {
		if _, err := CountTextFor("alone", Cl100kBase, text(i)); err != nil {
			t.Fatal(err)
		}
	}
	for i := range n {
		if !Cached("alone", Cl100kBase, text(i)) {
			t.Fatalf("count %d of %d is not cached, the cache holding far fewer than %d counts", i, n, cacheEntries)
		}
	}
}
