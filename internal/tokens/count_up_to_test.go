package tokens_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/tokens"
)

// A count up to a limit is exact while it does not pass the limit; past it,
// it stops after a chunk, with a lower bound, and the part counted is not
// remembered as the text's count.
func TestCountMessagesUpToStopsPastTheLimit(t *testing.T) {
	enc := tokens.O200kBase
	text := fmt.Sprintf("up to %d: ", time.Now().UnixNano()) + strings.Repeat("The quick brown fox jumps over the lazy dog. ", 200) // ~1,800 tokens
	msgs := []providers.Message{{Role: "system", Content: "Be brief."}, {Role: "user", Content: text}, {Role: "user", Content: "And then?"}}
	whole, err := tokens.CountMessages(enc, msgs)
	if err != nil {
		t.Fatal(err)
	}
	for _, limit := range []int{whole, whole + 1, 1 << 40} {
		if n, exact, err := tokens.CountMessagesUpToFor("", enc, msgs, limit); err != nil || n != whole || !exact {
			t.Errorf("up to %d: %d, exact %v (%v); want %d, exact", limit, n, exact, err, whole)
		}
	}
	for _, limit := range []int{0, 5, 500, 999, whole - 10} {
		n, exact, err := tokens.CountMessagesUpToFor("acme-up-to", enc, msgs, limit)
		if err != nil || exact || n <= limit || n >= whole || n > limit+600 {
			t.Errorf("up to %d: %d, exact %v (%v); want a lower bound over the limit, under %d, within a chunk of the limit", limit, n, exact, err, whole)
		}
		if limit < 1000 && tokens.Cached("acme-up-to", enc, text) { // the text itself stopped short, or was not reached
			t.Fatalf("up to %d: the count of part of the text is cached as the text's", limit)
		}
	}
	if n, _ := tokens.CountMessagesFor("acme-up-to", enc, msgs); n != whole {
		t.Fatalf("counted %d after counts that stopped, want %d", n, whole)
	}
}
