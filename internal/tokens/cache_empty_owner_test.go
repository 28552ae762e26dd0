package tokens_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/tokens"
)

// A count for the empty owner (a job planned without its owner, by
// mistake) is not cached: the empty owner would be one scope shared by every
// such caller, a timing oracle across tenants.
func TestCountForTheEmptyOwnerIsNotCached(t *testing.T) {
	text := fmt.Sprintf("no owner %d: ", time.Now().UnixNano()) + strings.Repeat("The quick brown fox jumps over the lazy dog. ", 20)
	before := tokens.CountCacheStats()
	if _, err := tokens.CountTextFor("", tokens.Cl100kBase, text); err != nil {
		t.Fatal(err)
	}
	if _, _, err := tokens.FitsFor("", tokens.Cl100kBase, []providers.Message{{Role: "user", Content: text}}, 0, 10); err != nil {
		t.Fatal(err)
	}
	if s := tokens.CountCacheStats(); s != before || tokens.Cached("", tokens.Cl100kBase, text) {
		t.Fatalf("counts for the empty owner went through the cache: %+v, then %+v", before, s)
	}
}
