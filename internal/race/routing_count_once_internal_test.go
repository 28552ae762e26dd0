package race

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/routerhq/router/internal/chat"
	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/store"
	"github.com/routerhq/router/internal/tokens"
)

// docs/prompts.md §5: token counting is the largest per-job CPU cost, so
// routing must "count once per distinct encoding on the route, not once per
// provider". A message over the count cache's 256 KiB (any caller can send
// one under the 1 MiB body limit) was tokenized again for every target that
// shares the encoding: about 0.6 s of CPU per target for 1 MiB, so one
// request on a route of four gpt-4o targets cost ~2.4 s of CPU. Found by
// review. Routing the same request over three targets of one encoding must
// cost about what one target costs (measured in allocations: tiktoken
// allocates per piece, so they track the tokenizing work exactly, with no
// timing threshold).
func TestRoutingCountsALongMessageOncePerEncoding(t *testing.T) {
	text := strings.Repeat("The quick brown fox jumps over the lazy dog, again and again. ", 5000) // ~310 KB, > 256 KiB
	in, err := json.Marshal(chat.Input{Messages: []providers.Message{{Role: "user", Content: text}}})
	if err != nil {
		t.Fatal(err)
	}
	// Windows below the text's bytes (routing must count) but above its tokens.
	targets := map[string]*Target{}
	for _, id := range []string{"a", "b", "c"} {
		targets[id] = &Target{Model: "gpt-4o", ContextWindow: 200000}
	}
	allocs := func(providers ...string) float64 {
		r := &Runner{cfg: Config{Targets: targets, Routes: map[string]*Route{"r": {Providers: providers}}}}
		job := &store.Job{ID: "j", Owner: "acme", Operation: chat.OperationPrefix + "r", Route: "r", Input: in}
		return testing.AllocsPerRun(1, func() {
			if routing, ok, err := r.Eligible(job); err != nil || !ok {
				t.Fatalf("not eligible (%v): %s", err, routing)
			}
		})
	}
	one, three := allocs("a"), allocs("a", "b", "c")
	if three > 1.5*one {
		t.Errorf("routing one 310 KB message: %.0f allocations over one gpt-4o target, %.0f over three (%.1f×): "+
			"the message is tokenized again for every target of the same encoding", one, three, three/one)
	}
}

// A request far past a target's window was tokenized whole before routing
// said it does not fit: 1 MiB against an 8k window cost ~0.6 s of CPU per
// target to answer 400 context_length_exceeded, when the count could stop
// once it passes the window less max_tokens (a few KB of text). A hostile or
// careless caller resending an over-long history made the router pay that
// much CPU per request. Found by review. Routing a request twice as long
// past a small window must not cost twice as much.
func TestRoutingStopsCountingPastTheWindow(t *testing.T) {
	targets := map[string]*Target{"a": {Model: "gpt-4o", ContextWindow: 2000}}
	r := &Runner{cfg: Config{Targets: targets, Routes: map[string]*Route{"r": {Providers: []string{"a"}}}}}
	allocs := func(copies int) float64 {
		// Over 256 KiB, so the count cache does not answer the measured run.
		text := strings.Repeat("The quick brown fox jumps over the lazy dog, again and again. ", copies)
		in, err := json.Marshal(chat.Input{Messages: []providers.Message{{Role: "user", Content: text}}})
		if err != nil {
			t.Fatal(err)
		}
		job := &store.Job{ID: "j", Owner: "acme", Operation: chat.OperationPrefix + "r", Route: "r", Input: in}
		// The fewest of a few runs: allocations elsewhere in the process
		// (another test's goroutines) can only add to a run's count, and
		// once routing stops early a run makes few (about 13k).
		fewest := math.Inf(1)
		for range 3 {
			fewest = min(fewest, testing.AllocsPerRun(1, func() {
				if routing, ok, err := r.Eligible(job); err != nil || ok {
					t.Fatalf("eligible %v (%v): %s; want too long for the window", ok, err, routing)
				}
			}))
		}
		return fewest
	}
	short, long := allocs(4400), allocs(8800) // ~270 KB and ~540 KB, both far past 2000 tokens
	if long > 1.5*short {
		t.Errorf("deciding that a request does not fit a 2000-token window: %.0f allocations for 270 KB, %.0f for 540 KB (%.1f×): "+
			"the whole request is tokenized, not just enough of it to pass the window", short, long, long/short)
	}
}

// Counting stops only past the most room any target of the encoding has: a
// prompt that fits one target of the route is counted exactly, for every
// target of its encoding, and one that fits none says it needs more than
// the tokens counted, a lower bound, with the advice of an exact refusal.
func TestRoutingCountPastEveryWindowIsALowerBound(t *testing.T) {
	text := strings.Repeat("The quick brown fox jumps over the lazy dog, again and again. ", 400) // ~5,200 tokens
	msgs := []providers.Message{{Role: "user", Content: text}}
	exact, err := tokens.CountMessages(tokens.O200kBase, msgs)
	if err != nil {
		t.Fatal(err)
	}
	r := &Runner{cfg: Config{Targets: map[string]*Target{
		"small": {Model: "gpt-4o", ContextWindow: 2000, DefaultMaxTokens: 100},
		"large": {Model: "gpt-4o", ContextWindow: 100000},
	}}}
	sp := &spec{msgs: msgs, owner: "acme"}
	beside := r.decide(&Route{Providers: []string{"small", "large"}}, sp)
	if d := beside[0]; d.Eligible || d.PromptTokens != exact || strings.Contains(d.Reason, "more than") || !beside[1].Eligible {
		t.Errorf("routing beside a target the prompt fits: %+v; want small refused with the exact count %d, large eligible", beside, exact)
	}
	// Another owner: acme's whole count is cached now, and a count found
	// in the cache is exact, as cheap as a bound.
	d := r.decide(&Route{Providers: []string{"small"}}, &spec{msgs: msgs, owner: "globex"})[0]
	want := fmt.Sprintf("context window too small: the prompt needs more than %d tokens plus max_tokens 100 (the target's default, sent because the request sets none) = more than %d, the window holds 2000: set a smaller max_tokens",
		d.PromptTokens, d.PromptTokens+100)
	if d.Eligible || d.Cause != CauseContextWindow || !strings.HasPrefix(d.Reason, want) || d.PromptTokens <= 2000-100 || d.PromptTokens >= exact {
		t.Errorf("the prompt fits no target: %+v; want %q…, a lower bound over %d and under the exact %d", d, want, 2000-100, exact)
	}
}
