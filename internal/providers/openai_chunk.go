// This file holds decodeChunk, which decodes one chunk of an OpenAI chat
// completion stream (the JSON of one SSE data line) with goccy/go-json, falling
// back to encoding/json wherever the two could differ.

package providers

import (
	"bytes"
	"encoding/json"

	openai "github.com/sashabaranov/go-openai"

	"github.com/routerhq/router/internal/jsonfast"
)

// decodeChunk decodes raw, one chunk of a chat completion stream, into *into
// (zeroed first) exactly as go-openai's Recv decodes it with encoding/json,
// with one difference nothing reads: into's choices array is kept, cleared,
// for this chunk's choices (see resetChunk), so a chunk without choices
// leaves Choices empty rather than nil.
//
// Why: a provider sends one chunk per token, and decoding it was the router's
// largest per-token cost. For a one-token chunk encoding/json takes about 9 µs,
// goccy/go-json under 2 µs (BenchmarkChunkDecode, 2-core VM).
//
// Errors are encoding/json's: when goccy fails (or panics: jsonfast.Unmarshal
// counts that as failing, so a provider's bytes cannot crash the router
// through goccy), raw is decoded again with
// encoding/json and its error (*json.SyntaxError, *json.UnmarshalTypeError, ...)
// is returned, so streamError classifies it and words it as before. Should
// encoding/json succeed where goccy failed, its value is returned.
//
// The guard (mayReuseArray): encoding/json gives a slice emptied by `[]` a new
// array, goccy keeps the old one; when a repeated key then fills the slice
// again, goccy decodes into the old elements where encoding/json starts from
// zero values. That takes an empty array and, besides it, an array the slice
// had before and one that fills it again: a chunk with an empty array (`[`,
// JSON whitespace, `]`, even inside a string) and another `[` goes to
// encoding/json alone. The last chunk of a real stream ("choices":[] and the
// usage) has one `[` and keeps goccy's path; a token whose text has `[]`, or
// `[` beside an empty array, does not. FuzzChunkDecodeMatchesEncodingJSON
// checks that every value and every error is encoding/json's.
func decodeChunk(raw []byte, into *openai.ChatCompletionStreamResponse) error {
	resetChunk(into)
	if !mayReuseArray(raw) {
		if jsonfast.Unmarshal(raw, into) {
			return nil
		}
		resetChunk(into) // goccy may have decoded a part
	}
	return json.Unmarshal(raw, into)
}

// resetChunk zeroes *into but keeps its choices' array, every element of it
// zeroed, as Choices of length 0. Both decoders decode an array's elements
// into the slice's own array while it has room (encoding/json's array(),
// goccy's sliceDecoder), so a stream decoded into one value allocates its
// choices once instead of once per chunk — goccy gives a new slice room for
// four, a third of a chunk's decoding time. Elements start zero as in a new
// array: neither decoder zeroes an element it decodes into, so without the
// clear a chunk would inherit the last chunk's fields (its finish_reason, its
// tool calls). An array with room for more than maxKeptChoices is dropped
// instead: a provider that sent one huge array must not make every later
// chunk clear it. The caller must not keep the chunk's Choices past the next
// decode; CompleteStream copies what it needs.
func resetChunk(into *openai.ChatCompletionStreamResponse) {
	choices := into.Choices[:cap(into.Choices)]
	if len(choices) > maxKeptChoices {
		choices = nil
	}
	clear(choices)
	*into = openai.ChatCompletionStreamResponse{Choices: choices[:0]}
}

// maxKeptChoices bounds the choices array resetChunk keeps: goccy's first
// allocation (room for four) and a little more; a chunk has one choice per
// requested completion (n), and the router asks for one.
const maxKeptChoices = 8

// mayReuseArray reports whether goccy could decode raw into an array a
// repeated key left behind: raw has an empty array and another `[`.
func mayReuseArray(raw []byte) bool {
	return bytes.Count(raw, []byte("[")) > 1 && hasEmptyArray(raw)
}

// hasEmptyArray reports whether raw has a `[` followed by JSON whitespace and
// `]`, in a string or not: a cheap superset of the empty arrays of the JSON.
func hasEmptyArray(raw []byte) bool {
	for {
		i := bytes.IndexByte(raw, '[')
		if i < 0 {
			return false
		}
		raw = raw[i+1:]
		j := 0
		for j < len(raw) && (raw[j] == ' ' || raw[j] == '\t' || raw[j] == '\n' || raw[j] == '\r') {
			j++
		}
		if j < len(raw) && raw[j] == ']' {
			return true
		}
	}
}

// chunkToolCallExtras is the extra_content of each tool-call delta of raw, a
// stream chunk decoded already (decodeStreamChunk), by choice and by the
// delta's position in the choice's delta.tool_calls: nil for a chunk
// without one. Only a chunk whose bytes name "extra_content" is decoded
// again (hasExtraContent), so the stream's per-chunk cost stays decodeChunk's
// (BenchmarkOpenAIStream); the second decode is encoding/json's, as
// decodeChunk's fallback is.
func chunkToolCallExtras(raw []byte) [][]json.RawMessage {
	if !hasExtraContent(raw) {
		return nil
	}
	var v struct {
		Choices []struct {
			Delta struct {
				ToolCalls extraToolCalls `json:"tool_calls"`
			} `json:"delta"`
		} `json:"choices"`
	}
	if json.Unmarshal(raw, &v) != nil {
		return nil
	}
	var out [][]json.RawMessage
	for i, c := range v.Choices {
		if x := c.Delta.ToolCalls.extras(); x != nil {
			if out == nil {
				out = make([][]json.RawMessage, len(v.Choices))
			}
			out[i] = x
		}
	}
	return out
}
