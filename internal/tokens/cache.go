package tokens

import (
	"hash/maphash"
	"sync"

	"github.com/pkoukk/tiktoken-go"
)

// Counting is dominated by tiktoken-go's regexp2 pre-tokenizer (about 2 µs per
// token). The system messages of a prompt are the same for every job, so counts of
// longer texts are remembered, keyed by a seeded 64-bit hash and the length (the
// text itself is not kept). The cache is bounded: when full it is emptied.
const (
	cacheMinBytes = 256       // shorter texts are cheap to count
	cacheMaxBytes = 256 << 10 // longer ones are rare and not worth keeping
	cacheEntries  = 4096
)

type countKey struct {
	encoding string
	hash     uint64
	length   int
}

var counts = struct {
	sync.Mutex
	seed maphash.Seed
	m    map[countKey]int
}{seed: maphash.MakeSeed(), m: make(map[countKey]int)}

// countCached counts text's tokens, through the cache for texts of a useful size.
func countCached(encoding string, tk *tiktoken.Tiktoken, text string) int {
	if len(text) < cacheMinBytes || len(text) > cacheMaxBytes {
		return len(tk.EncodeOrdinary(text))
	}
	key := countKey{encoding: encoding, hash: maphash.String(counts.seed, text), length: len(text)}
	counts.Lock()
	n, ok := counts.m[key]
	counts.Unlock()
	if ok {
		return n
	}
	n = len(tk.EncodeOrdinary(text))
	counts.Lock()
	if len(counts.m) >= cacheEntries {
		clear(counts.m)
	}
	counts.m[key] = n
	counts.Unlock()
	return n
}
