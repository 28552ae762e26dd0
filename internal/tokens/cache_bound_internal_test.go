package tokens

import (
	"fmt"
	"strings"
	"testing"
)

// Keying the cache by owner must not loosen its bound: however many owners
// count, it never holds more than cacheEntries counts.
func TestCountCacheStaysBoundedAcrossOwners(t *testing.T) {
	text := strings.Repeat("x", cacheMinBytes)
	for i := range cacheEntries + 10 {
		if _, err := CountTextFor(fmt.Sprintf("owner-%d", i), Cl100kBase, text); err != nil {
			t.Fatal(err)
		}
		counts.Lock()
		n := len(counts.m)
		counts.Unlock()
		if n > cacheEntries {
			t.Fatalf("the cache holds %d counts after %d owners, more than its bound of %d", n, i+1, cacheEntries)
		}
	}
}
