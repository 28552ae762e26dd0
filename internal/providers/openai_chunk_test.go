// This file holds the tests of decodeChunk: a differential fuzz test against
// encoding/json with hand-written, deeply nested and generated seed chunks, a
// check that common chunks take goccy's path, and BenchmarkChunkDecode.

package providers

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strconv"
	"strings"
	"testing"

	gojson "github.com/goccy/go-json"
	openai "github.com/sashabaranov/go-openai"
)

// chunkSeeds are realistic chunks and the edge cases where a decoder other than
// encoding/json could differ.
var chunkSeeds = []string{
	// a one-token chunk as OpenAI sends it
	`{"id":"chatcmpl-B9MBs8CjcvOU2jLn4n570S5qMJKcT","object":"chat.completion.chunk","created":1741569952,"model":"gpt-4o-mini-2024-07-18","service_tier":"default","system_fingerprint":"fp_06737a9306","choices":[{"index":0,"delta":{"content":" billing"},"logprobs":null,"finish_reason":null}]}`,
	// the first chunk (role, empty content) and the last ones (finish_reason, usage)
	`{"id":"c1","object":"chat.completion.chunk","created":1741569952,"model":"gpt-4o-mini","choices":[{"index":0,"delta":{"role":"assistant","content":"","refusal":null},"logprobs":null,"finish_reason":null}],"usage":null}`,
	`{"id":"c1","object":"chat.completion.chunk","created":1741569952,"model":"gpt-4o-mini","choices":[{"index":0,"delta":{},"logprobs":null,"finish_reason":"stop"}],"usage":null}`,
	`{"id":"c1","object":"chat.completion.chunk","created":1741569952,"model":"gpt-4o-mini","choices":[],"usage":{"prompt_tokens":19,"completion_tokens":10,"total_tokens":29,"prompt_tokens_details":{"cached_tokens":0,"audio_tokens":0},"completion_tokens_details":{"reasoning_tokens":0,"audio_tokens":0,"accepted_prediction_tokens":0,"rejected_prediction_tokens":0}}}`,
	// tool-call deltas: the call's head, then argument fragments, then finish_reason tool_calls
	`{"id":"c2","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":null,"tool_calls":[{"index":0,"id":"call_DdmO9pD3xa9XTPNJ32zg2hcA","type":"function","function":{"name":"get_weather","arguments":""}}],"refusal":null},"logprobs":null,"finish_reason":null}]}`,
	`{"id":"c2","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"location\":\"Par"}}]},"logprobs":null,"finish_reason":null}]}`,
	`{"id":"c2","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"id":"call_2","type":"function","function":{"name":"f","arguments":"{}"}},{"index":0,"function":{"arguments":"is\"}"}}]},"finish_reason":null}]}`,
	`{"id":"c2","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{},"logprobs":null,"finish_reason":"tool_calls"}]}`,
	`{"choices":[{"index":0,"delta":{"function_call":{"name":"f","arguments":"{}"}},"finish_reason":"function_call"}]}`,
	// refusal, reasoning content, logprobs, content filter results, prompt annotations
	`{"id":"c3","choices":[{"index":0,"delta":{"refusal":"I can't help with that."},"finish_reason":null}]}`,
	`{"id":"c3","choices":[{"index":0,"delta":{"reasoning_content":"Let me think\u2026"},"finish_reason":null}]}`,
	`{"id":"c3","choices":[{"index":0,"delta":{"content":"Hi"},"logprobs":{"content":[{"token":"Hi","logprob":-0.0001,"bytes":[72,105],"top_logprobs":[{"token":"Hi","logprob":-0.0001,"bytes":[72,105]},{"token":"Hello","logprob":-9.5,"bytes":null}]}],"refusal":null},"finish_reason":null}]}`,
	`{"id":"c4","choices":[{"index":0,"delta":{"content":"x"},"finish_reason":null,"content_filter_results":{"hate":{"filtered":false,"severity":"safe"},"self_harm":{"filtered":false,"severity":"safe"},"sexual":{"filtered":false,"severity":"safe"},"violence":{"filtered":true,"severity":"medium"},"jailbreak":{"filtered":false,"detected":false},"profanity":{"filtered":false,"detected":true}}}]}`,
	`{"id":"","object":"","created":0,"model":"","choices":[],"prompt_filter_results":[{"prompt_index":0,"content_filter_results":{"hate":{"filtered":false,"severity":"safe"}}}],"prompt_annotations":[{"prompt_index":1,"content_filter_results":{"jailbreak":{"filtered":false,"detected":false}}}]}`,
	`{"choices":[{"index":1,"delta":{"content":"second choice"},"finish_reason":"length"},{"index":0,"delta":{"content":"first"},"finish_reason":"content_filter"}]}`,
	// string escapes, unicode, line and paragraph separators, surrogates
	`{"choices":[{"index":0,"delta":{"content":"a\"b\\c\/d\be\ff\ng\rh\ti\u0000j\u001fk"}}]}`,
	`{"choices":[{"index":0,"delta":{"content":"Grüße, 世界 🎉 \u00e9\u4e16\ud83c\udf89"}}]}`,
	"{\"choices\":[{\"index\":0,\"delta\":{\"content\":\"line\u2028sep\u2029para \\u2028 \\u2029\"}}]}",
	`{"choices":[{"index":0,"delta":{"content":"lone \ud800 surrogate \udc00 and \ud800\u0041 pair"}}]}`,
	`{"choices":[{"index":0,"delta":{"content":"bad escape \x"}}]}`,
	`{"choices":[{"index":0,"delta":{"content":"short \u12"}}]}`,
	// invalid UTF-8 and raw control bytes inside strings and keys
	"{\"choices\":[{\"index\":0,\"delta\":{\"content\":\"\xff\xfe bad \xc3\x28 \xed\xa0\x80 \xf4\x90\x80\x80 \xc0\xaf trunc \xe2\x82\"}}]}",
	"{\"id\":\"\xff\",\"model\":\"m\xc3\"}",
	"{\"choices\":[{\"index\":0,\"delta\":{\"content\":\"tab\there\x01\x1f\"}}]}",
	"{\"i\xffd\":\"x\",\"model\":\"m\"}",
	"{\"choices\":[{\"index\":0,\"delta\":{\"content\":\"x\"}}]}\x00",
	// unknown fields of every kind, at every level
	`{"id":"c5","new_field":{"a":[1,2,{"b":null}],"c":"d"},"choices":[{"index":0,"delta":{"content":"x","audio":{"id":"a"},"annotations":[]},"extra":true,"finish_reason":null}],"obfuscation":"abc","usage":{"prompt_tokens":1,"extra":1}}`,
	// duplicate keys: the last wins, and a repeated array or object merges into the first
	`{"id":"a","id":"b","model":"m","model":null}`,
	`{"choices":[{"index":0,"delta":{"content":"a","role":"assistant"}}],"choices":[{"delta":{"content":"b"},"finish_reason":"stop"}]}`,
	`{"choices":[{"index":0,"delta":{"content":"a"}},{"index":1}],"choices":[{"finish_reason":"stop"}]}`,
	`{"usage":{"prompt_tokens":1,"prompt_tokens_details":{"cached_tokens":3}},"usage":{"completion_tokens":2,"prompt_tokens_details":{"audio_tokens":4}}}`,
	`{"usage":{"prompt_tokens":1},"usage":null}`,
	`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"x","function":{"name":"f"}}],"tool_calls":[{"function":{"arguments":"{}"}}]}}]}`,
	`{"choices":[{"index":0,"logprobs":{"content":[{"token":"a","bytes":[1,2,3]}]},"logprobs":{"content":[{"bytes":[4]}]}}]}`,
	// keys differing only in case, and non-ASCII letters that fold to ASCII ones
	`{"ID":"upper","Choices":[{"INDEX":0,"Delta":{"Content":"x","TOOL_CALLS":[{"Index":0,"Id":"c","Function":{"NAME":"f"}}]},"Finish_Reason":"stop"}],"Usage":{"Prompt_Tokens":1}}`,
	`{"id":"exact","ID":"upper","Id":"mixed"}`,
	`{"ID":"upper","id":"exact"}`,
	"{\"\u017fystem_fingerprint\":\"long s\",\"\u212aey\":1,\"mode\u212a\":\"kelvin\"}",
	`{"\u0069d":"escaped key","mod\u0065l":"m","\u017fystem_fingerprint":"escaped long s","MODE\u212a":"x"}`,
	`{"system_fingerprint ":"trailing space","systemfingerprint":"no underscore","system-fingerprint":"dash"}`,
	// numbers: exponents, negative zero, fractions, huge, overflowing
	`{"created":1e3,"choices":[{"index":0}]}`,
	`{"created":-0,"choices":[{"index":-0}]}`,
	`{"created":1.0}`,
	`{"created":1.5}`,
	`{"created":9223372036854775807}`,
	`{"created":9223372036854775808}`,
	`{"created":-9223372036854775808}`,
	`{"created":100000000000000000000000000000}`,
	`{"created":1E+2,"usage":{"prompt_tokens":2e0}}`,
	`{"created":01}`,
	`{"created":-}`,
	`{"created":.5}`,
	`{"created":"1741569952"}`,
	`{"choices":[{"index":2147483648}]}`,
	`{"choices":[{"logprobs":{"content":[{"token":"a","logprob":1e400}]}}]}`,
	`{"choices":[{"logprobs":{"content":[{"token":"a","logprob":-1.7976931348623157e308,"bytes":[255,256,-1]}]}}]}`,
	// nulls for every field
	`{"id":null,"object":null,"created":null,"model":null,"choices":null,"system_fingerprint":null,"prompt_annotations":null,"prompt_filter_results":null,"usage":null}`,
	`{"choices":[null,{"index":null,"delta":null,"logprobs":null,"finish_reason":null,"content_filter_results":null}]}`,
	`{"choices":[{"delta":{"content":null,"role":null,"function_call":null,"tool_calls":null,"refusal":null,"reasoning_content":null}}]}`,
	`{"choices":[{"delta":{"tool_calls":[null,{"index":null,"id":null,"type":null,"function":null}]}}]}`,
	`{"usage":{"prompt_tokens":null,"completion_tokens":null,"total_tokens":null,"prompt_tokens_details":null,"completion_tokens_details":null}}`,
	`null`,
	// wrong types: encoding/json reports them and goes on
	`{"id":1,"created":"x","choices":{},"usage":[]}`,
	`{"choices":[{"index":"0","delta":{"content":1,"tool_calls":{}},"finish_reason":false}]}`,
	`{"choices":[{"delta":{"tool_calls":[{"index":1.5}]}}]}`,
	`{"choices":[{"delta":{"tool_calls":[{"index":true}]}}]}`,
	`[]`, `"chunk"`, `123`, `true`,
	// trailing garbage, truncation, empty input, whitespace
	`{"id":"x"} {"id":"y"}`,
	`{"id":"x"}]`,
	`{"id":"x"`,
	`{"id":"x",}`,
	`{"choices":[{"index":0},]}`,
	`{'id':'x'}`,
	``,
	"  \t\r\n{\"id\" : \"x\" ,\n \"choices\" :\t[ ] }  \r\n",
	"\ufeff{\"id\":\"bom\"}",
	`{"id":"x"}/* comment */`,
	`{"id":NaN}`,
	`{"id":"x","choices":[{"index":0,"delta":{"content":"y"}}]}}`,
	// deeply nested arrays and objects in unknown fields
	`{"unknown":[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]],"id":"deep"}`,
	`{"unknown":{"a":{"a":{"a":{"a":{"a":{"a":{"a":{"a":{"a":{"a":{"a":{"a":{"a":{}}}}}}}}}}}}},"id":"deep"}`,
	`{"unknown":[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]],"id":"bad depth"}`,
	// an empty array, then the same key again: encoding/json starts the slice
	// anew, goccy decoded into the old elements (a difference found by the
	// generated chunks: such chunks go to encoding/json, see decodeChunk)
	`{"choices":[{"index":0,"delta":{"content":"a"}}],"choices":[],"choices":[null]}`,
	`{"choices":[{"index":0,"delta":{"content":"a"},"finish_reason":"stop"}],"CHOICES":[ ],"Choices":[{"index":0}]}`,
	"{\"prompt_filter_results\":[{\"index\":7,\"content_filter_results\":{\"hate\":{\"filtered\":true}}}],\"prompt_filter_results\":[\t\r\n ],\"prompt_filter_results\":[{}]}",
	`{"choices":[{"delta":{"tool_calls":[{"index":0,"id":"a","function":{"name":"f"}}]}}],"choices":[{"delta":{"tool_calls":[]}}],"choices":[{"delta":{"tool_calls":[{"type":"function"}]}}]}`,
	`{"choices":[{"logprobs":{"content":[{"token":"a","top_logprobs":[{"token":"b","logprob":-1}]}]}}],"choices":[{"logprobs":{"content":[{"top_logprobs":[]}]}}],"choices":[{"logprobs":{"content":[{"top_logprobs":[{}]}]}}]}`,
	// a slice shrunk by a shorter array, then grown again: both decode into the old elements
	`{"choices":[{"index":0,"delta":{"content":"a"}},{"index":1,"delta":{"content":"b"}},{"index":2}],"choices":[{"finish_reason":"stop"}],"choices":[{},{},{},{"index":3}]}`,
	// "[]" inside a string only sends the chunk to encoding/json
	`{"id":"c","choices":[{"index":0,"delta":{"content":"x := []int{}"},"finish_reason":null}]}`,
}

// deepChunks nest an unknown field's arrays and objects to just under, at and just
// over encoding/json's limit of 10000 levels.
func deepChunks() []string {
	var out []string
	for _, depth := range []int{9999, 10000, 10001} {
		n := depth - 1 // the chunk's own object is a level
		out = append(out,
			`{"unknown":`+strings.Repeat("[", n)+strings.Repeat("]", n)+`,"id":"deep"}`,
			`{"unknown":`+strings.Repeat(`{"a":`, n-1)+`{}`+strings.Repeat("}", n-1)+`,"id":"deep"}`,
			`{"choices":[{"delta":{"tool_calls":[{"function":{"arguments":"`+strings.Repeat("[", depth)+`"},"x":`+strings.Repeat("[", n-5)+strings.Repeat("]", n-5)+`}]}}]}`,
		)
	}
	return out
}

// chunkGen writes random chunks of the shape of ChatCompletionStreamResponse:
// known keys in other cases, with escapes or with letters that fold to ASCII
// ones (ſ, K), repeated keys, unknown keys, nulls, empty and shrinking arrays,
// numbers of every form, strings with escapes, invalid UTF-8 and control bytes,
// and now and then a value of the wrong type. Mutating bytes rarely builds such
// chunks; these found the one difference decodeChunk guards against.
type chunkGen struct{ r *rand.Rand }

// chunkShapes are the JSON fields of each struct of a chunk: s string, i int,
// f float, b bool, ai array of ints, o:X an object of shape X, a:X an array of them.
var chunkShapes = map[string][][2]string{
	"resp":   {{"id", "s"}, {"object", "s"}, {"created", "i"}, {"model", "s"}, {"choices", "a:choice"}, {"system_fingerprint", "s"}, {"prompt_annotations", "a:pa"}, {"prompt_filter_results", "a:pa"}, {"usage", "o:usage"}},
	"choice": {{"index", "i"}, {"delta", "o:delta"}, {"logprobs", "o:lp"}, {"finish_reason", "s"}, {"content_filter_results", "o:cfr"}},
	"delta":  {{"content", "s"}, {"role", "s"}, {"function_call", "o:fc"}, {"tool_calls", "a:tc"}, {"refusal", "s"}, {"reasoning_content", "s"}},
	"fc":     {{"name", "s"}, {"arguments", "s"}},
	"tc":     {{"index", "i"}, {"id", "s"}, {"type", "s"}, {"function", "o:fc"}},
	"lp":     {{"content", "a:tok"}, {"refusal", "a:tok"}},
	"tok":    {{"token", "s"}, {"bytes", "ai"}, {"logprob", "f"}, {"top_logprobs", "a:tok"}},
	"usage":  {{"prompt_tokens", "i"}, {"completion_tokens", "i"}, {"total_tokens", "i"}, {"prompt_tokens_details", "o:ptd"}, {"completion_tokens_details", "o:ctd"}},
	"ptd":    {{"audio_tokens", "i"}, {"cached_tokens", "i"}},
	"ctd":    {{"audio_tokens", "i"}, {"reasoning_tokens", "i"}, {"accepted_prediction_tokens", "i"}, {"rejected_prediction_tokens", "i"}},
	"pa":     {{"index", "i"}, {"prompt_index", "i"}, {"content_filter_results", "o:cfr"}},
	"cfr":    {{"hate", "o:sev"}, {"self_harm", "o:sev"}, {"sexual", "o:sev"}, {"violence", "o:sev"}, {"jailbreak", "o:det"}, {"profanity", "o:det"}},
	"sev":    {{"filtered", "b"}, {"severity", "s"}},
	"det":    {{"filtered", "b"}, {"detected", "b"}},
}

func (g *chunkGen) pick(s ...string) string { return s[g.r.IntN(len(s))] }

func (g *chunkGen) chunk() string {
	s := g.object(chunkShapes["resp"], 0)
	if g.r.IntN(20) == 0 {
		s += g.pick(" ", "x", "}", "\x00", " {}")
	}
	return s
}

func (g *chunkGen) key(k string) string {
	switch g.r.IntN(12) {
	case 0:
		return strings.ToUpper(k)
	case 1:
		b := []byte(k)
		for i := range b {
			if g.r.IntN(2) == 0 && b[i] >= 'a' && b[i] <= 'z' {
				b[i] -= 'a' - 'A'
			}
		}
		return string(b)
	case 2:
		return strings.Replace(strings.Replace(k, "s", "\u017f", 1), "k", "\u212a", 1)
	case 3:
		i := g.r.IntN(len(k))
		return k[:i] + fmt.Sprintf(`\u%04x`, k[i]) + k[i+1:]
	case 4:
		return k + g.pick(" ", "_", "\x00", "\xff", `\u0000`, "\u00e9")
	case 5:
		return strings.ReplaceAll(k, "_", "-")
	}
	return k
}

func (g *chunkGen) str() string {
	var b strings.Builder
	b.WriteByte('"')
	for range g.r.IntN(5) {
		b.WriteString(g.pick("a", " billing", `\"`, `\\`, `\/`, `\n`, `\t`, `\u00e9`, `\ud83c\udf89`, `\ud800`, `\udc00x`,
			"\u2028", `\u2028`, "é", "世", "🎉", "\xff", "\xc3", "\xed\xa0\x80", "\x7f", `\u0000`, "\xef\xbf\xbd", "\xf4\x90\x80\x80"))
	}
	if g.r.IntN(100) == 0 {
		b.WriteString(g.pick("\x01", "\t", `\x`, `\u12`))
	}
	b.WriteByte('"')
	return b.String()
}

func (g *chunkGen) num() string {
	switch g.r.IntN(100) {
	case 0:
		return g.pick("01", "1.", "-", ".5", "+1", "0x1")
	case 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20:
		return g.pick("0", "-0", "1e3", "1E+2", "1.0", "1.5", "9223372036854775807", "9223372036854775808",
			"-9223372036854775809", "2147483648", "1e400", "-1e-400", "0.000001", "255", "256", "-129", "3e0",
			"123456789012345678901234567890")
	}
	return strconv.Itoa(g.r.IntN(2000) - 10)
}

// any is a value of any kind, for unknown keys and wrong types.
func (g *chunkGen) any(depth int) string {
	switch g.r.IntN(7) {
	case 0:
		return "null"
	case 1:
		return g.pick("true", "false")
	case 2:
		return g.num()
	case 3:
		return g.str()
	case 4:
		var e []string
		for range g.r.IntN(3) * min(1, 4-depth) {
			e = append(e, g.any(depth+1))
		}
		return "[" + strings.Join(e, ",") + "]"
	case 5:
		if depth > 3 {
			return "{}"
		}
		return g.object(nil, depth+1)
	}
	return `""`
}

func (g *chunkGen) value(kind string, depth int) string {
	if g.r.IntN(40) == 0 {
		return g.any(depth)
	}
	switch {
	case kind == "s":
		return g.str()
	case kind == "i", kind == "f":
		return g.num()
	case kind == "b":
		return g.pick("true", "false", "null")
	case kind == "ai":
		var e []string
		for range g.r.IntN(4) {
			e = append(e, g.num())
		}
		return "[" + strings.Join(e, ",") + "]"
	case depth > 6:
		return "null"
	case strings.HasPrefix(kind, "o:"):
		return g.object(chunkShapes[kind[2:]], depth+1)
	default: // a:
		var e []string
		for range g.r.IntN(4) {
			if g.r.IntN(10) == 0 {
				e = append(e, "null")
			} else {
				e = append(e, g.object(chunkShapes[kind[2:]], depth+1))
			}
		}
		return "[" + strings.Join(e, ",") + "]"
	}
}

func (g *chunkGen) object(shape [][2]string, depth int) string {
	var kv []string
	for range g.r.IntN(len(shape) + 3) {
		if len(shape) == 0 || g.r.IntN(8) == 0 {
			kv = append(kv, g.str()+":"+g.any(depth))
			continue
		}
		f := shape[g.r.IntN(len(shape))]
		kv = append(kv, `"`+g.key(f[0])+`":`+g.value(f[1], depth))
	}
	return "{" + strings.Join(kv, ",") + "}"
}

// generatedChunks is n chunks of chunkGen, the same ones every run.
func generatedChunks(n int) []string {
	g := &chunkGen{r: rand.New(rand.NewPCG(1, 2))}
	out := make([]string, n)
	for i := range out {
		out[i] = g.chunk()
	}
	return out
}

// FuzzChunkDecodeMatchesEncodingJSON: for any bytes, decodeChunk decodes what
// encoding/json decodes (reflect.DeepEqual: nil and empty slices differ, but
// for the chunk's Choices, which decodeChunk may leave empty where
// encoding/json leaves nil), and fails where it fails, with an error of the
// same type and text.
func FuzzChunkDecodeMatchesEncodingJSON(f *testing.F) {
	for _, s := range chunkSeeds {
		f.Add([]byte(s))
	}
	for _, s := range deepChunks() {
		f.Add([]byte(s))
	}
	for _, s := range generatedChunks(500) {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		orig := bytes.Clone(raw)
		var want openai.ChatCompletionStreamResponse
		werr := json.Unmarshal(raw, &want)
		got := leftOver()
		gerr := decodeChunk(raw, &got)
		if !bytes.Equal(raw, orig) {
			t.Fatalf("decodeChunk changed its input")
		}
		if werr != nil {
			if gerr == nil || gerr.Error() != werr.Error() || reflect.TypeOf(gerr) != reflect.TypeOf(werr) {
				t.Fatalf("input %q: encoding/json says %T %v, decodeChunk says %T %v", raw, werr, werr, gerr, gerr)
			}
			return
		}
		if gerr != nil {
			t.Fatalf("input %q: encoding/json decodes it, decodeChunk says %T %v", raw, gerr, gerr)
		}
		if len(got.Choices) == 0 && want.Choices == nil {
			got.Choices = nil // the kept array (decodeChunk's one difference)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("input %q:\n encoding/json %#v\n decodeChunk   %#v", raw, want, got)
		}
	})
}

// leftOver is a chunk as the previous one left it: fields the next chunk may
// not have, and a choices array with room whose every element (beyond the
// slice's length too) holds an earlier chunk's choice, which decodeChunk
// decodes into.
func leftOver() openai.ChatCompletionStreamResponse {
	i := 2
	choices := make([]openai.ChatCompletionStreamChoice, 4)
	for k := range choices {
		choices[k] = openai.ChatCompletionStreamChoice{Index: 1, FinishReason: openai.FinishReasonStop,
			Delta: openai.ChatCompletionStreamChoiceDelta{Content: "left over", Role: "assistant",
				ToolCalls: []openai.ToolCall{{Index: &i, ID: "call_left_over"}}}}
	}
	return openai.ChatCompletionStreamResponse{ID: "left over", Choices: choices[:2], Usage: &openai.Usage{TotalTokens: 7}}
}

// TestChunkDecodeDropsAHugeChoicesArray: after a chunk with many choices, the
// next chunk does not clear (or keep) an array that large.
func TestChunkDecodeDropsAHugeChoicesArray(t *testing.T) {
	var got openai.ChatCompletionStreamResponse
	if err := decodeChunk([]byte(`{"choices":[`+strings.Repeat(`{},`, 999)+`{}]}`), &got); err != nil {
		t.Fatal(err)
	}
	if len(got.Choices) != 1000 {
		t.Fatalf("%d choices, want 1000", len(got.Choices))
	}
	if err := decodeChunk([]byte(`{"choices":[{"delta":{"content":"x"}}]}`), &got); err != nil {
		t.Fatal(err)
	}
	if c := cap(got.Choices); c > maxKeptChoices || len(got.Choices) != 1 || got.Choices[0].Delta.Content != "x" {
		t.Errorf("after a chunk of 1000 choices: %d choices with room for %d (at most %d kept)", len(got.Choices), c, maxKeptChoices)
	}
}

// TestChunkDecodeKeepsChoicesArray: a stream decoded into one value decodes
// each chunk's choices into the same array, and a chunk inherits nothing of
// the one before, on goccy's path and on encoding/json's.
func TestChunkDecodeKeepsChoicesArray(t *testing.T) {
	chunks := []string{
		`{"id":"a","choices":[{"index":0,"delta":{"content":"x","tool_calls":[{"index":0,"id":"c"}]},"finish_reason":"stop"}]}`,
		`{"id":"b","choices":[{"index":0,"delta":{"content":"y"}}]}`,
		`{"choices":[],"choices":[{"delta":{"role":"tool"}}]}`, // the guard: encoding/json
		`{"choices":[{"delta":{"refusal":"z"}}]}`,
	}
	var got openai.ChatCompletionStreamResponse
	var prev *openai.ChatCompletionStreamChoice
	for i, raw := range chunks {
		if err := decodeChunk([]byte(raw), &got); err != nil {
			t.Fatalf("chunk %d: %v", i, err)
		}
		var want openai.ChatCompletionStreamResponse
		if err := json.Unmarshal([]byte(raw), &want); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("chunk %d:\n encoding/json %#v\n decodeChunk   %#v", i, want, got)
		}
		// encoding/json gives `[]` an array of its own: the chunk after
		// the guarded one decodes into that.
		if i > 0 && i != 2 && &got.Choices[0] != prev {
			t.Errorf("chunk %d: its choices went into a new array", i)
		}
		prev = &got.Choices[0]
	}
}

// benchChunks are a one-token chunk, a tool-call argument fragment, and the
// last chunk with the usage (whose "choices":[] is its only array).
var benchChunks = []struct{ name, raw string }{
	{"token", `{"id":"chatcmpl-B9MBs8CjcvOU2jLn4n570S5qMJKcT","object":"chat.completion.chunk","created":1741569952,"model":"gpt-4o-mini-2024-07-18","service_tier":"default","system_fingerprint":"fp_06737a9306","choices":[{"index":0,"delta":{"content":" billing"},"logprobs":null,"finish_reason":null}]}`},
	{"tool_call", `{"id":"chatcmpl-B9MBs8CjcvOU2jLn4n570S5qMJKcT","object":"chat.completion.chunk","created":1741569952,"model":"gpt-4o-mini-2024-07-18","service_tier":"default","system_fingerprint":"fp_06737a9306","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"location\":\"Paris, France\"}"}}]},"logprobs":null,"finish_reason":null}]}`},
	{"usage", `{"id":"chatcmpl-B9MBs8CjcvOU2jLn4n570S5qMJKcT","object":"chat.completion.chunk","created":1741569952,"model":"gpt-4o-mini-2024-07-18","service_tier":"default","system_fingerprint":"fp_06737a9306","choices":[],"usage":{"prompt_tokens":19,"completion_tokens":10,"total_tokens":29,"prompt_tokens_details":{"cached_tokens":0,"audio_tokens":0},"completion_tokens_details":{"reasoning_tokens":0,"audio_tokens":0,"accepted_prediction_tokens":0,"rejected_prediction_tokens":0}}}`},
}

// TestChunkDecodeFastPath: the token, tool-call and usage chunks take goccy's
// path, without the guard or a fallback (else BenchmarkChunkDecode measures
// nothing); a chunk with an empty array and another `[` does not.
func TestChunkDecodeFastPath(t *testing.T) {
	if !mayReuseArray([]byte(`{"choices":[{"index":0}],"choices":[],"choices":[null]}`)) {
		t.Error("a chunk with an empty array and another array takes goccy's path")
	}
	for _, c := range benchChunks {
		var v openai.ChatCompletionStreamResponse
		if mayReuseArray([]byte(c.raw)) {
			t.Errorf("%s: the guard sends it to encoding/json", c.name)
		}
		if err := gojson.Unmarshal([]byte(c.raw), &v); err != nil {
			t.Errorf("%s: goccy fails: %v", c.name, err)
		}
	}
}

func BenchmarkChunkDecode(b *testing.B) {
	for _, c := range benchChunks {
		raw := []byte(c.raw)
		b.Run(c.name+"/encoding-json", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				var v openai.ChatCompletionStreamResponse
				if err := json.Unmarshal(raw, &v); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(c.name+"/decodeChunk", func(b *testing.B) {
			b.ReportAllocs()
			var v openai.ChatCompletionStreamResponse
			for b.Loop() {
				if err := decodeChunk(raw, &v); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
