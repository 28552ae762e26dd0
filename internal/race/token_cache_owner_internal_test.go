package race

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/routerhq/router/internal/chat"
	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/store"
	"github.com/routerhq/router/internal/tokens"
)

// Routing counts a request's tokens when its bytes exceed a target's
// window, through the token-count cache. The cache was shared by all
// owners: a long text one tenant had sent was counted at once for another,
// a new one at ~2 µs a token, so tenant B could time its own chat requests
// to learn whether tenant A had recently sent a given text. Found by
// review. Each owner's counts are now its own: the same text sent by two
// owners is two misses, and the first owner's count answers only it.
func TestRoutingTokenCountCacheIsPerOwner(t *testing.T) {
	const model = "gpt-4o"
	text := fmt.Sprintf("contract %d: ", time.Now().UnixNano()) + strings.Repeat("The tenant's confidential clause, word for word. ", 60)
	in, err := json.Marshal(chat.Input{Messages: []providers.Message{{Role: "user", Content: text}}})
	if err != nil {
		t.Fatal(err)
	}
	enc, err := tokens.EncodingForModel("", model)
	if err != nil {
		t.Fatal(err)
	}
	// A window below the text's bytes but above its tokens: routing counts
	// it, and the request fits.
	r := &Runner{cfg: Config{
		Targets: map[string]*Target{"p": {Model: model, ContextWindow: len(text) / 2}},
		Routes:  map[string]*Route{"r": {Providers: []string{"p"}}},
	}}
	route := func(owner string) {
		t.Helper()
		routing, ok, err := r.Eligible(&store.Job{ID: "job-" + owner, Owner: owner, Operation: chat.OperationPrefix + "r", Route: "r", Input: in})
		if err != nil || !ok {
			t.Fatalf("owner %s: eligible %v (%v), routing %s: the request should fit the window of %d tokens", owner, ok, err, routing, len(text)/2)
		}
	}
	before := tokens.CountCacheStats()
	route("tenant-a")
	if !tokens.Cached("tenant-a", enc, text) {
		t.Fatalf("routing tenant-a's request did not cache its text's count for tenant-a (the owner did not reach the count)")
	}
	if tokens.Cached("tenant-b", enc, text) {
		t.Fatalf("tenant-a's count of its text is a cache hit for tenant-b: tenant-b can time its requests to learn what tenant-a sent")
	}
	route("tenant-b")
	if !tokens.Cached("tenant-b", enc, text) {
		t.Fatalf("routing tenant-b's request did not cache its count for tenant-b")
	}
	if d := tokens.CountCacheStats().Misses - before.Misses; d < 2 {
		t.Fatalf("two owners' identical texts made %d cache misses, want one each (2)", d)
	}
}

// The usage estimates of an attempt without the provider's usage (a hedge
// loser, a cut stream) count the job's prompt and the answer's text through
// the same cache: for the job's owner only.
func TestUsageEstimateTokenCountCacheIsPerOwner(t *testing.T) {
	prompt := fmt.Sprintf("prompt %d: ", time.Now().UnixNano()) + strings.Repeat("The tenant's confidential clause, word for word. ", 20)
	answer := fmt.Sprintf("answer %d: ", time.Now().UnixNano()) + strings.Repeat("The tenant's confidential reply, word for word. ", 20)
	a := &store.Attempt{Model: "gpt-4o"}
	enc, err := tokens.EncodingForModel("", "gpt-4o")
	if err != nil {
		t.Fatal(err)
	}
	sp := &spec{owner: "tenant-a", msgs: []providers.Message{{Role: "user", Content: prompt}}}
	if _, ok := promptEstimate(&Target{}, sp, a); !ok {
		t.Fatal("no estimate of the prompt")
	}
	if _, ok := textEstimate(&Target{}, sp, a, answer); !ok {
		t.Fatal("no estimate of the answer")
	}
	for _, text := range []string{prompt, answer} {
		if !tokens.Cached("tenant-a", enc, text) {
			t.Fatalf("the estimate of tenant-a's text %.20q was not cached for tenant-a (the owner did not reach the count)", text)
		}
		if tokens.Cached("tenant-b", enc, text) {
			t.Fatalf("tenant-a's text %.20q is a cache hit for tenant-b", text)
		}
	}
}
