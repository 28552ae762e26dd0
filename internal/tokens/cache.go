package tokens

import (
	"hash/maphash"
	"math"
	"sync"
	"unicode/utf8"

	"github.com/pkoukk/tiktoken-go"
)

// Counting is dominated by tiktoken-go's regexp2 pre-tokenizer (about 2 µs per
// token). The system messages of a prompt are the same for every job, so counts of
// longer texts are remembered, keyed by a seeded 64-bit hash and the length (the
// text itself is not kept). The cache is bounded; once it is full, an owner
// past its share of it loses its own counts, else the owner holding the most
// does (evictFor) — so one tenant sending many long texts cannot empty the
// cache of everyone else's system prompts, and a router with one tenant still
// has the whole cache.
//
// Each count is remembered for its owner (tenant) only: the key holds a seeded
// hash of the owner, so one owner's counts never answer another's. A shared
// cache answered a text any owner had sent at once and a new one at ~2 µs a
// token, so a tenant could time its own requests to learn whether another
// tenant had recently sent a given long text. Every text is keyed by owner,
// a prompt's system text too: that text is rendered with the caller's input,
// so telling the router's own text from a caller's is not cheap, and a
// prompt's system text is counted once per owner instead of once. Counts
// asked for without an owner (CountText, CountMessages, Fits, or an empty
// owner) do not use the cache at all.
const (
	cacheMinBytes = 256       // shorter texts are cheap to count
	cacheMaxBytes = 256 << 10 // longer ones are rare and not worth keeping
	cacheEntries  = 4096
	ownerEntries  = cacheEntries / 8 // one owner's share
)

type countKey struct {
	encoding string
	owner    uint64 // seeded hash of the owner: the owner's name is not kept either
	hash     uint64
	length   int
}

var counts = struct {
	sync.Mutex
	seed         maphash.Seed
	m            map[countKey]int
	owned        map[uint64]int // how many of m's counts each owner has
	hits, misses uint64
}{seed: maphash.MakeSeed(), m: make(map[countKey]int), owned: make(map[uint64]int)}

// scope says whose cache a count goes through: cached false counts every
// text anew (a count asked for without an owner). owner is the owner's
// seeded hash, computed once for the scope rather than for each text a
// count of many messages looks up.
type scope struct {
	owner  uint64
	cached bool
}

// ownedBy is the cache scope of owner's texts. A count for no owner (a job
// planned without its owner, by mistake) is not cached: it would be shared
// by every caller that forgot one, the timing oracle the owner closes.
func ownedBy(owner string) scope {
	if owner == "" {
		return scope{}
	}
	return scope{owner: maphash.String(counts.seed, owner), cached: true}
}

// cacheable says whether text's count is remembered.
func cacheable(text string) bool { return len(text) >= cacheMinBytes && len(text) <= cacheMaxBytes }

func (s scope) key(encoding, text string) countKey {
	return countKey{encoding: encoding, owner: s.owner, hash: maphash.String(counts.seed, text), length: len(text)}
}

// count counts text's tokens, through s's cache for texts of a useful size.
func (s scope) count(encoding string, tk *tiktoken.Tiktoken, text string) int {
	n, _ := s.countUpTo(encoding, tk, text, math.MaxInt)
	return n
}

// countUpTo is count that stops once the count passes budget
// (encodeCountUpTo): whole false says it did, and text has more than n
// tokens. A count found in the cache is whole; one that stopped is not
// remembered.
func (s scope) countUpTo(encoding string, tk *tiktoken.Tiktoken, text string, budget int) (n int, whole bool) {
	if !s.cached || !cacheable(text) {
		return encodeCountUpTo(tk, text, budget)
	}
	key := s.key(encoding, text)
	counts.Lock()
	n, ok := counts.m[key]
	if ok {
		counts.hits++
	} else {
		counts.misses++
	}
	counts.Unlock()
	if ok {
		return n, true
	}
	if n, whole = encodeCountUpTo(tk, text, budget); !whole {
		return n, false
	}
	counts.Lock()
	if _, ok := counts.m[key]; !ok {
		evictFor(key.owner)
		counts.m[key] = n
		counts.owned[key.owner]++
	}
	counts.Unlock()
	return n, true
}

// evictFor makes room in a full cache for one more of owner's counts: an
// owner at its share or past it loses its own counts, else the owner that has
// the most does. A cache not yet full evicts nothing: the share bounds an
// owner only against the others. An eviction walks the cache once (at most cacheEntries keys,
// microseconds), less than counting one cacheable text costs, and it comes
// only when a count not in the cache was just made. Called with counts
// locked.
func evictFor(owner uint64) {
	if len(counts.m) < cacheEntries {
		return
	}
	victim := owner
	if counts.owned[owner] < ownerEntries {
		most := 0
		for o, n := range counts.owned {
			if n > most {
				victim, most = o, n
			}
		}
	}
	for k := range counts.m {
		if k.owner == victim {
			delete(counts.m, k)
		}
	}
	delete(counts.owned, victim)
}

// CacheStats is how often a count was looked up in the cache and found
// (Hits) or not (Misses), since the process started: texts too short or too
// long for the cache, and counts asked for without an owner, are neither.
type CacheStats struct{ Hits, Misses uint64 }

// CountCacheStats returns the cache's lookups so far.
func CountCacheStats() CacheStats {
	counts.Lock()
	defer counts.Unlock()
	return CacheStats{Hits: counts.hits, Misses: counts.misses}
}

// Cached reports whether owner's count of text under encoding is in the
// cache now: whether CountTextFor(owner, encoding, text) would be a hit. It
// counts nothing and changes nothing; for tests and diagnostics.
func Cached(owner, encoding, text string) bool {
	s := ownedBy(owner)
	if !s.cached || !cacheable(text) {
		return false
	}
	key := s.key(encoding, text)
	counts.Lock()
	defer counts.Unlock()
	_, ok := counts.m[key]
	return ok
}

// chunkBytes bounds the text handed to tiktoken-go at once. Its byte-pair
// merge is quadratic in the length of one pre-tokenized piece (a run of
// letters, punctuation or whitespace with no break), and its pre-tokenizer
// backtracks over whitespace runs: 1 MiB of one letter, an input any caller
// can send, took about half an hour. Chunks of at most this size keep the
// worst case linear (about 1 µs per byte), near the cost of ordinary text.
const chunkBytes = 512

// encodeCount is len(tk.EncodeOrdinary(text)), a chunk at a time. A chunk
// ends, where it can, just before a space that follows a printable ASCII
// character: no piece of any offline encoding's pre-tokenizer spans that
// point and none of their patterns looks behind, so the count is exactly
// tiktoken's. Text with no such point within chunkBytes (a run of one
// character, base64, minified JSON, CJK without spaces) is cut at a rune
// boundary, which may shift its count by about a token per cut.
func encodeCount(tk *tiktoken.Tiktoken, text string) int {
	n, _ := encodeCountUpTo(tk, text, math.MaxInt)
	return n
}

// encodeCountUpTo is encodeCount that stops, after a chunk, once the count
// passes budget: whole false says text has more than n tokens (the rest,
// not empty, has one at least).
func encodeCountUpTo(tk *tiktoken.Tiktoken, text string, budget int) (n int, whole bool) {
	for len(text) > chunkBytes {
		if n > budget {
			return n, false
		}
		cut := cutPoint(text)
		n += len(tk.EncodeOrdinary(text[:cut]))
		text = text[cut:]
	}
	if n > budget && text != "" {
		return n, false
	}
	return n + len(tk.EncodeOrdinary(text)), true
}

// cutPoint returns where to end the next chunk of text, longer than
// chunkBytes: the last safe point (see encodeCount) in text[1:chunkBytes+1],
// else the last rune boundary at or before chunkBytes.
func cutPoint(text string) int {
	for i := chunkBytes; i > 0; i-- {
		if text[i] == ' ' && text[i-1] > ' ' && text[i-1] < 0x7f {
			return i
		}
	}
	for i := chunkBytes; i > chunkBytes-utf8.UTFMax; i-- {
		if utf8.RuneStart(text[i]) {
			return i
		}
	}
	return chunkBytes // not UTF-8 here: the count is an estimate anyway
}
