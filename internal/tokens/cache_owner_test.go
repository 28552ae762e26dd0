package tokens_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/tokens"
)

// The count cache was shared by all owners (tenants): a long text one owner
// had counted was a hit for any other, answered at once instead of at ~2 µs
// a token, a timing oracle on what another tenant sent. Found by review. A
// count cached for one owner answers that owner only.
func TestCountCacheIsPerOwner(t *testing.T) {
	text := fmt.Sprintf("secret %d: ", time.Now().UnixNano()) + strings.Repeat("The quick brown fox jumps over the lazy dog. ", 20)
	enc := tokens.Cl100kBase
	count := func(owner string, wantHits, wantMisses uint64) int {
		t.Helper()
		before := tokens.CountCacheStats()
		n, err := tokens.CountTextFor(owner, enc, text)
		if err != nil {
			t.Fatal(err)
		}
		after := tokens.CountCacheStats()
		if hits, misses := after.Hits-before.Hits, after.Misses-before.Misses; hits != wantHits || misses != wantMisses {
			t.Fatalf("counting for %s: %d hits and %d misses, want %d and %d", owner, hits, misses, wantHits, wantMisses)
		}
		return n
	}
	a := count("tenant-a", 0, 1)
	if tokens.Cached("tenant-b", enc, text) {
		t.Fatal("tenant-a's count is cached for tenant-b")
	}
	b := count("tenant-b", 0, 1) // not tenant-a's entry
	if a != b || a != count("tenant-a", 1, 0) || b != count("tenant-b", 1, 0) {
		t.Fatalf("counts differ: %d %d", a, b)
	}
	// Messages (the routing path) are keyed the same way.
	msgs := []providers.Message{{Role: "user", Content: text + " again"}}
	before := tokens.CountCacheStats()
	if _, err := tokens.CountMessagesFor("tenant-a", enc, msgs); err != nil {
		t.Fatal(err)
	}
	if _, _, err := tokens.FitsFor("tenant-b", enc, msgs, 10, 100000); err != nil {
		t.Fatal(err)
	}
	if s := tokens.CountCacheStats(); s.Hits != before.Hits || s.Misses-before.Misses != 2 {
		t.Fatalf("the same messages for two owners: %d hits and %d misses, want 0 and 2", s.Hits-before.Hits, s.Misses-before.Misses)
	}
}

// A count asked for without an owner neither reads nor fills the cache: no
// owner's entry answers it and it answers no owner.
func TestCountWithoutOwnerIsNotCached(t *testing.T) {
	text := fmt.Sprintf("unowned %d: ", time.Now().UnixNano()) + strings.Repeat("The quick brown fox jumps over the lazy dog. ", 20)
	before := tokens.CountCacheStats()
	n, err := tokens.CountText(tokens.Cl100kBase, text)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tokens.CountMessages(tokens.Cl100kBase, []providers.Message{{Role: "user", Content: text}}); err != nil {
		t.Fatal(err)
	}
	if s := tokens.CountCacheStats(); s != before {
		t.Fatalf("counts without an owner went through the cache: %+v, then %+v", before, s)
	}
	if tokens.Cached("", tokens.Cl100kBase, text) {
		t.Fatal("a count without an owner was cached")
	}
	if m, _ := tokens.CountTextFor("", tokens.Cl100kBase, text); m != n {
		t.Fatalf("counted %d for the empty owner, %d without one", m, n)
	}
}
