package tokens

import (
	"hash/maphash"
	"strings"
	"testing"
)

// A scope hashes its owner once (ownedBy), not for every text it looks up:
// the key of each text still carries that owner's seeded hash, the same for
// every scope of one owner and its own for each owner, as when key() hashed
// the owner itself.
func TestScopeKeysCarryTheOwnersHash(t *testing.T) {
	text := strings.Repeat("x", cacheMinBytes)
	acme := ownedBy("acme")
	if got, want := acme.key(Cl100kBase, text).owner, maphash.String(counts.seed, "acme"); got != want {
		t.Fatalf("key's owner hash %x, want the owner's seeded hash %x", got, want)
	}
	if a, b := acme.key(Cl100kBase, text), ownedBy("acme").key(Cl100kBase, text); a != b {
		t.Errorf("two scopes of one owner key the same text apart: %+v, %+v", a, b)
	}
	if a, b := acme.key(Cl100kBase, text), ownedBy("other").key(Cl100kBase, text); a == b {
		t.Errorf("two owners' scopes key the same text alike: %+v", a)
	}
	if a, b := acme.key(Cl100kBase, text), acme.key(Cl100kBase, text+"y"); a == b {
		t.Errorf("one scope keys two texts alike: %+v", a)
	}
}

// BenchmarkScopeKey is the cost of looking up one cacheable text in an
// owner's scope: the text's hash only, the owner's being the scope's.
func BenchmarkScopeKey(b *testing.B) {
	s := ownedBy("a-tenant-with-a-longish-name")
	text := strings.Repeat("x", cacheMinBytes)
	for b.Loop() {
		_ = s.key(Cl100kBase, text)
	}
}
