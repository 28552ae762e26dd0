package tokens

import (
	"hash/maphash"
	"sync"
	"unicode/utf8"

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
		return encodeCount(tk, text)
	}
	key := countKey{encoding: encoding, hash: maphash.String(counts.seed, text), length: len(text)}
	counts.Lock()
	n, ok := counts.m[key]
	counts.Unlock()
	if ok {
		return n
	}
	n = encodeCount(tk, text)
	counts.Lock()
	if len(counts.m) >= cacheEntries {
		clear(counts.m)
	}
	counts.m[key] = n
	counts.Unlock()
	return n
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
	n := 0
	for len(text) > chunkBytes {
		cut := cutPoint(text)
		n += len(tk.EncodeOrdinary(text[:cut]))
		text = text[cut:]
	}
	return n + len(tk.EncodeOrdinary(text))
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
