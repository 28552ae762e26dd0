// This file holds the tests of ParseJSON's goccy path: a differential fuzz test
// against encoding/json with hand-written, deeply nested and generated seeds, a
// check that common inputs take goccy's path, and BenchmarkParseJSON.

package contract

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/routerhq/router/internal/jsonfast"
)

// parseSeeds are realistic job inputs and model outputs, and the edge cases
// where a decoder other than encoding/json could differ.
var parseSeeds = []string{
	// job inputs and model outputs as the router sees them
	`{"subject":"Charged twice","body":"My card was billed twice for March.\nPlease refund.","customer_tier":"enterprise"}`,
	`{"category":"billing","priority":"high","summary":"Customer was charged twice for the same order and wants a refund","confidence":0.93,"tags":["refund","duplicate-charge"]}`,
	`{"category":"billing","priority":"high","summary":"Customer was charged twice for the March invoice and wants a refund.","needs_human":true}`,
	"{\n  \"invoice_number\": \"INV-2024-0042\",\n  \"currency\": \"EUR\",\n  \"issue_date\": \"2024-03-01\",\n  \"line_items\": [\n    {\"description\": \"Consulting\", \"quantity\": 10, \"unit_price\": 150.00, \"amount\": 1500.00},\n    {\"description\": \"Travel\", \"quantity\": 1, \"unit_price\": 320.50, \"amount\": 320.50}\n  ],\n  \"subtotal\": 1820.50,\n  \"tax\": 345.90,\n  \"total\": 2166.40\n}\n",
	`{"messages":[{"role":"system","content":"You are terse."},{"role":"user","content":"Hi"}],"temperature":0.2,"max_tokens":256,"stop":null,"stream":false}`,
	// duplicate keys: the last wins, also with values of other kinds
	`{"a":1,"a":2}`,
	`{"a":{"x":1,"y":2},"a":{"z":3}}`,
	`{"a":[1,2,3],"a":[]}`,
	`{"a":[],"a":[1]}`,
	`{"a":[1,2],"a":null,"a":"s"}`,
	`{"a":{"b":{"c":1}},"a":{"b":{"d":2}}}`,
	`{"":1,"":2}`,
	`{"a":1,"\u0061":2}`,
	// keys differing in case, and letters that fold to ASCII ones
	`{"Key":1,"key":2,"KEY":3}`,
	"{\"\u017fubject\":1,\"subject\":2,\"\u212aey\":3,\"key\":4}",
	`{"\u017fubject":1,"SUBJECT":2}`,
	// strings: every escape, invalid UTF-8, surrogates, U+2028, NUL, controls
	`"a\"b\\c\/d\be\ff\ng\rh\ti\u0000j\u001fk"`,
	`{"s":"Grüße, 世界 🎉 \u00e9\u4e16\ud83c\udf89"}`,
	"{\"s\":\"line\u2028sep\u2029para \\u2028 \\u2029\"}",
	`{"s":"lone \ud800 surrogate \udc00 and \ud800\u0041 pair \udbff\udfff \ud800\ud800\udc00 \udc00\ud800"}`,
	`{"s":"\ud83c"}`, `{"s":"\ud83c\u"}`, `{"s":"\ud83c\udf8"}`, `{"s":"\ud83c\\udf89"}`,
	`{"s":"\uD83C\uDF89 \uFFFD \uFEFF \uffff \u0080"}`,
	`{"s":"bad escape \x"}`, `{"s":"short \u12"}`, `{"s":"\u12g4"}`, `{"s":"\U0041"}`, `{"s":"\'"}`,
	"{\"s\":\"\xff\xfe bad \xc3\x28 \xed\xa0\x80 \xf4\x90\x80\x80 \xc0\xaf \xe0\x80\xaf trunc \xe2\x82\"}",
	"{\"\xff\":1,\"\xfe\":2,\"\xef\xbf\xbd\":3}",
	"\"\xc3\"", "\"\xe2\x82\"", "\"\xf0\x9f\x8e\"", "\"\x80\"", "\"\xf8\x88\x80\x80\x80\"",
	"{\"s\":\"tab\there\x01\x1f\"}", "\"\x7f\"", "\"\x00\"", "{\"s\":\"a\x00b\"}",
	`{"s":"\u0000","\u0000":"k"}`,
	`"` + strings.Repeat(`\u00e9`, 300) + `"`,
	`"` + strings.Repeat("é", 300) + "\xff" + `"`,
	`"` + strings.Repeat("a", 5000) + `"`,
	// numbers: every form, valid and not
	`0`, `-0`, `-0.0`, `0.0`, `0e0`, `-0e-0`, `1`, `-1`, `1.5`, `0.1`, `1e3`, `1E+2`, `1e-2`, `1E-0`, `2.5e+10`,
	`1e400`, `-1e400`, `1e-400`, `4.9e-324`, `1.7976931348623157e308`, `1.7976931348623159e308`,
	`9223372036854775807`, `9223372036854775808`, `-9223372036854775809`, `18446744073709551616`,
	`123456789012345678901234567890123456789012345678901234567890`,
	`0.30000000000000000000000000000000000000001`,
	`01`, `-01`, `00`, `-`, `--1`, `+1`, `1.`, `.5`, `-.5`, `1.e3`, `1e`, `1e+`, `1E-`, `0x1`, `1_000`, `Infinity`, `NaN`, `-Infinity`,
	`[0,-0,1e3,1E+2,0.1,1e400,01]`, `[1.]`, `[-]`, `{"n":-}`, `{"n":1.}`, `{"n":01}`, `{"n":1e400}`,
	`[1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20]`,
	strings.Repeat("9", 10000), "-" + strings.Repeat("1", 400) + "." + strings.Repeat("0", 400) + "e-" + strings.Repeat("9", 30),
	`[1x]`, `{"a":1x}`, `-0x`, `1e5.`, `[-0,]`, `[01]`, `{"a":-}`, `[1e]`, `[1.e]`, `1.5e`, `0.`, `-0.`, `00.5`,
	"1 ", "1\n", " 1", "-0 ", "1e3\t",
	// literals and top-level scalars
	`true`, `false`, `null`, `""`, `"x"`, `tru`, `nul`, `nulll`, `True`, `NULL`, `falsey`, `t`, `n`, `f`,
	`[true,false,null]`, `{"t":true,"f":false,"n":null}`, `[tru]`, `{"a":nul}`,
	// arrays and objects, empty and not, with whitespace everywhere
	`[]`, `{}`, `[[]]`, `[{}]`, `{"a":{}}`, `{"a":[]}`, `[ ]`, `{ }`, "[\t\r\n]", "{\t\r\n}",
	" \t\r\n{ \"a\" : [ 1 , { \"b\" : null } ] , \"c\" : \"d\" } \t\r\n",
	`[1,[2,[3,[4,[5]]]]]`, `[[],[[]],[[],[]]]`, `{"a":[{"b":[{"c":[]}]}]}`,
	// broken syntax of every kind
	`{"a":1,}`, `[1,]`, `[,1]`, `{,"a":1}`, `{"a" 1}`, `{"a":}`, `{"a"}`, `{a:1}`, `{'a':1}`, `['a']`,
	`{"a":1 "b":2}`, `[1 2]`, `{"a":1}}`, `[1]]`, `{"a":[1}`, `[{"a":1]`, `{"a":1`, `[1`, `{"a`, `"abc`, `{`, `[`, `}`, `]`, `:`, `,`,
	`{"a":1}/* comment */`, `// c` + "\n1", `{"a":1}#`, `{1:2}`, `{null:1}`, `{"a"::1}`, `{"a":1,"b"}`, "{\"a\":1,\n}",
	// trailing data and whitespace
	`{"a":1} {"b":2}`, `{"a":1}]`, `{"a":1}x`, `1 2`, `[] []`, `null null`, `"a""b"`, `truefalse`, `1x`, `1.5.5`, `1e5e5`, `-0-0`,
	"{\"a\":1}\x00", "{\"a\":1}\x00garbage", "1\x00", "\x001", "{\"a\":1}\v", "{\"a\":1}\f", "{\"a\":1}\u00a0", "{\"a\":1}\u2028",
	"{\"a\":1} \t\r\n \t\r\n", "{\"a\":1}\n\n\n}", "[1]\r\n,",
	// bytes that are not JSON whitespace between the tokens
	"[1,\x002]", "{\"a\"\x00:1}", "[1\v]", "{\"a\":\f1}", "[\u00a01]", "[1,\u20282]", "{\"a\":1\x00}",
	// empty, whitespace, BOM, other leading bytes
	``, ` `, "\t\r\n ", "\n\n\n", "\x00", "\v1", "\f1", "\u00a01", "\ufeff{\"a\":1}", "\ufeff", "\xef\xbb", "{\"a\":1}\ufeff",
	// wrapped outputs ParseJSON gets when StripFence does not apply
	"```json\n{\"a\":1}\n```", "Sure! Here it is: {\"a\":1}", `{"a":1} I hope this helps!`,
	// big flat values
	`[` + strings.Repeat(`1,`, 2000) + `1]`,
	`{` + strings.Repeat(`"k":"v",`, 1000) + `"k":"w"}`,
}

// deepSeeds nest arrays, objects and both to just under, at and just over
// encoding/json's limit of 10000 levels, and far beyond it, complete and not.
func deepSeeds() []string {
	var out []string
	for _, n := range []int{9998, 9999, 10000, 10001, 10002, 20000} {
		out = append(out,
			strings.Repeat("[", n)+strings.Repeat("]", n),
			strings.Repeat(`{"a":`, n-1)+`{}`+strings.Repeat("}", n-1),
			strings.Repeat(`[{"a":`, n/2)+`1`+strings.Repeat("}]", n/2),
			strings.Repeat("[", n)+`1`+strings.Repeat("]", n),
			strings.Repeat("[", n),
			strings.Repeat("[", n)+strings.Repeat("]", n)+" x",
			`{"x":1,"deep":`+strings.Repeat("[", n-1)+strings.Repeat("]", n-1)+`}`,
			`"`+strings.Repeat("[", n)+`"`,
		)
	}
	return out
}

// jsonGen writes random JSON: a small set of keys in other cases, with escapes
// or with letters that fold to ASCII ones (ſ, K), repeated keys, numbers of every
// form, strings with escapes, surrogates, invalid UTF-8 and control bytes,
// whitespace of JSON and not, and now and then a broken byte or trailing data.
// Mutating bytes rarely builds such values.
type jsonGen struct{ r *rand.Rand }

func (g *jsonGen) pick(s ...string) string { return s[g.r.IntN(len(s))] }

func (g *jsonGen) doc() string {
	s := g.ws() + g.value(0) + g.ws()
	switch g.r.IntN(25) {
	case 0:
		s += g.pick(" ", "x", "}", "]", ",", "\x00", " {}", " 1", "\v", "\ufeff", "\u00a0")
	case 1:
		if len(s) > 0 {
			s = s[:g.r.IntN(len(s))] // truncated
		}
	case 2:
		if len(s) > 0 {
			i := g.r.IntN(len(s))
			s = s[:i] + g.pick(",", ":", "[", "]", "{", "}", `"`, `\`, "\x00", "0", "-", " ", "\xff") + s[i:]
		}
	}
	return s
}

func (g *jsonGen) ws() string {
	if g.r.IntN(3) != 0 {
		return ""
	}
	return g.pick(" ", "\t", "\n", "\r", " \r\n\t ", "\n\n")
}

func (g *jsonGen) key() string {
	k := g.pick("a", "b", "id", "key", "subject", "tags", "priority", "", "confidence")
	switch g.r.IntN(10) {
	case 0:
		k = strings.ToUpper(k)
	case 1:
		k = strings.Replace(strings.Replace(k, "s", "\u017f", 1), "k", "\u212a", 1)
	case 2:
		if k != "" {
			i := g.r.IntN(len(k))
			k = k[:i] + fmt.Sprintf(`\u%04x`, k[i]) + k[i+1:]
		}
	case 3:
		k += g.pick(" ", "\x00", "\xff", `\u0000`, "\u00e9", `\ud800`, `\n`)
	}
	return `"` + k + `"`
}

func (g *jsonGen) str() string {
	var b strings.Builder
	b.WriteByte('"')
	for range g.r.IntN(6) {
		b.WriteString(g.pick("a", " billing", `\"`, `\\`, `\/`, `\b`, `\f`, `\n`, `\r`, `\t`, `\u00e9`, `\u00E9`,
			`\ud83c\udf89`, `\ud800`, `\udc00x`, `\ud800\ud800`, `\udbff\udfff`, `\ufffd`, `\u0000`, `\u001f`, `\u007f`,
			"\u2028", `\u2028`, "é", "世", "🎉", "\xff", "\xc3", "\xed\xa0\x80", "\x7f", "\xef\xbf\xbd", "\xf4\x90\x80\x80",
			"\xe2\x82", "\xc0\xaf", "[]", "{}", `\\u0041`))
	}
	if g.r.IntN(60) == 0 {
		b.WriteString(g.pick("\x01", "\t", "\n", "\x00", `\x`, `\u12`, `\U0041`, `\'`, `\`))
	}
	b.WriteByte('"')
	return b.String()
}

func (g *jsonGen) num() string {
	switch g.r.IntN(60) {
	case 0:
		return g.pick("01", "-01", "1.", "-", ".5", "+1", "0x1", "1e", "1e+", "--1", "1.e1", "Infinity", "NaN")
	case 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20:
		return g.pick("0", "-0", "-0.0", "0e0", "1e3", "1E+2", "1e-2", "1.0", "1.5", "0.1", "0.93", "9223372036854775807",
			"9223372036854775808", "-9223372036854775809", "18446744073709551616", "1e400", "-1e-400", "0.000001",
			"4.9e-324", "1.7976931348623157e308", "123456789012345678901234567890", "2.5E-3", "100e0")
	}
	if g.r.IntN(2) == 0 {
		return strconv.FormatFloat(g.r.NormFloat64()*1000, 'g', -1, 64)
	}
	return strconv.Itoa(g.r.IntN(2000) - 10)
}

func (g *jsonGen) value(depth int) string {
	n := 9
	if depth > 4 {
		n = 7 // no more arrays or objects
	}
	switch g.r.IntN(n) {
	case 0:
		return g.pick("null", "true", "false")
	case 1, 2:
		return g.num()
	case 3, 4, 5, 6:
		return g.str()
	case 7:
		var e []string
		for range g.r.IntN(4) {
			e = append(e, g.ws()+g.value(depth+1)+g.ws())
		}
		return "[" + g.ws() + strings.Join(e, ",") + "]"
	}
	var kv []string
	for range g.r.IntN(5) {
		kv = append(kv, g.ws()+g.key()+g.ws()+":"+g.ws()+g.value(depth+1)+g.ws())
	}
	return "{" + g.ws() + strings.Join(kv, ",") + "}"
}

// generatedDocs is n documents of jsonGen, the same ones every run.
func generatedDocs(n int) []string {
	g := &jsonGen{r: rand.New(rand.NewPCG(3, 4))}
	out := make([]string, n)
	for i := range out {
		out[i] = g.doc()
	}
	return out
}

// FuzzParseJSONMatchesEncodingJSON: for any bytes, ParseJSON gives the value
// parseJSONStd (encoding/json alone) gives (reflect.DeepEqual), or fails where
// it fails, with an error of the same type and text; it leaves its input alone,
// and its value does not change when the input does or with the next call.
func FuzzParseJSONMatchesEncodingJSON(f *testing.F) {
	for _, s := range parseSeeds {
		f.Add([]byte(s))
	}
	for _, s := range deepSeeds() {
		f.Add([]byte(s))
	}
	for _, s := range generatedDocs(1000) {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		orig := bytes.Clone(b)
		want, werr := parseJSONStd(b)
		got, gerr := ParseJSON(b)
		if !bytes.Equal(b, orig) {
			t.Fatalf("ParseJSON changed its input")
		}
		if werr != nil {
			if gerr == nil || gerr.Error() != werr.Error() || reflect.TypeOf(gerr) != reflect.TypeOf(werr) {
				t.Fatalf("input %q: encoding/json says %T %v, ParseJSON says %T %v (value %#v)", b, werr, werr, gerr, gerr, got)
			}
			if got != nil {
				t.Fatalf("input %q: ParseJSON fails with a value %#v", b, got)
			}
			return
		}
		if gerr != nil {
			t.Fatalf("input %q: encoding/json decodes it, ParseJSON says %T %v", b, gerr, gerr)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("input %q:\n encoding/json %#v\n ParseJSON     %#v", b, want, got)
		}
		// the value is its own: it refers neither to the input nor to a buffer
		// goccy reuses for the next call
		clear(b)
		if _, err := ParseJSON([]byte(`["` + strings.Repeat("x", len(b)) + `"]`)); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("input %q: the value changed with the input or the next call:\n was %#v\n now %#v", orig, want, got)
		}
	})
}

// TestParseJSONConcurrent: goccy's decoders share pooled state; ParseJSON from
// several goroutines at once still gives encoding/json's values and errors
// (run it with -race).
func TestParseJSONConcurrent(t *testing.T) {
	docs := append(append([]string{}, parseSeeds...), generatedDocs(200)...)
	type result struct {
		v   any
		err string
	}
	want := make([]result, len(docs))
	for i, d := range docs {
		v, err := parseJSONStd([]byte(d))
		want[i] = result{v, fmt.Sprint(err)}
	}
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for i := range docs {
				i = (i + g*len(docs)/4) % len(docs)
				v, err := ParseJSON([]byte(docs[i]))
				if got := (result{v, fmt.Sprint(err)}); !reflect.DeepEqual(got, want[i]) {
					t.Errorf("input %q: got %#v, want %#v", docs[i], got, want[i])
					return
				}
			}
		})
	}
	wg.Wait()
}

// benchParse are a job's input and a model's output.
var benchParse = []struct{ name, raw string }{
	{"input", `{"subject":"Charged twice","body":"My card was billed twice for March.\nPlease refund.","customer_tier":"enterprise"}`},
	{"output", `{"category":"billing","priority":"high","summary":"Customer was charged twice for the same order and wants a refund","confidence":0.93,"tags":["refund","duplicate-charge"]}`},
}

// TestParseJSONFastPath: the benchmark's input and output take goccy's path
// (else BenchmarkParseJSON measures nothing), and its numbers are json.Number.
func TestParseJSONFastPath(t *testing.T) {
	for _, c := range benchParse {
		v, ok := jsonfast.Value([]byte(c.raw))
		if !ok {
			t.Errorf("%s: does not take goccy's path", c.name)
		}
		want, _ := parseJSONStd([]byte(c.raw))
		if !reflect.DeepEqual(v, want) {
			t.Errorf("%s: goccy %#v, encoding/json %#v", c.name, v, want)
		}
	}
	v, _ := jsonfast.Value([]byte(`[1e400,-0,0.10]`))
	if want := []any{json.Number("1e400"), json.Number("-0"), json.Number("0.10")}; !reflect.DeepEqual(v, want) {
		t.Errorf("numbers: got %#v, want %#v", v, want)
	}
}

func BenchmarkParseJSON(b *testing.B) {
	for _, c := range benchParse {
		raw := []byte(c.raw)
		b.Run(c.name+"/encoding-json", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := parseJSONStd(raw); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(c.name+"/ParseJSON", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := ParseJSON(raw); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
