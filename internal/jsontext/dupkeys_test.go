package jsontext

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

func TestDuplicateKey(t *testing.T) {
	big := func(dupAt int) string { // an object of 40 members, the last named as member dupAt
		var sb strings.Builder
		sb.WriteString(`{"outer":{`)
		for i := range 40 {
			fmt.Fprintf(&sb, `"k%d":%d,`, i, i)
		}
		if dupAt >= 0 {
			fmt.Fprintf(&sb, `"\u006b%d":0`, dupAt)
		} else {
			sb.WriteString(`"last":0`)
		}
		sb.WriteString(`}}`)
		return sb.String()
	}
	for _, tc := range []struct {
		text, ptr, key string // ptr "-" for no duplicate
	}{
		{`{"priority":"bogus","priority":"low"}`, "", "priority"},
		{`{"priority":"bogus","\u0070riority":"low"}`, "", "priority"},
		{`{"\u0070riority":"bogus","priority":"low"}`, "", "priority"},
		{`{"\u0070riority":1,"\u0070\u0072iority":2}`, "", "priority"},
		{`{"n":1e9,"n":1}`, "", "n"},
		{` { "a" : 1 , "b" : { "c" : [ 1 , { "d" : 1 , "d" : 2 } ] } } `, "/b/c/1", "d"},
		{`[0,{"x":{"y":1}},{"a/b~":{"k":1,"k":2}}]`, "/2/a~1b~0", "k"},
		{`{"":1,"":2}`, "", ""},
		{`{"a":"\"a\"","b":{"a":1},"a":2}`, "", "a"},
		{`{"e\u0301":1,"é":2}`, "-", ""}, // another character
		{`{"a":{"x":1},"b":{"x":1},"c":[{"x":1},{"x":2}]}`, "-", ""},
		{`{"a":"a","b":"\"a\":1","ab":1,"\\":1,"\\\\":2,"\"":3}`, "-", ""},
		{`{"p":1,"q":{"p":2,"q":3}}`, "-", ""},
		{`["a","a",{"a":"a"}]`, "-", ""},
		{`"a"`, "-", ""},
		{`{}`, "-", ""},
		{big(-1), "-", ""},
		{big(0), "/outer", "k0"},
		{big(39), "/outer", "k39"},
	} {
		e := DuplicateKey([]byte(tc.text))
		if tc.ptr == "-" {
			if e != nil {
				t.Errorf("%s: %v, want no duplicate", tc.text, e)
			}
			continue
		}
		if e == nil || e.Pointer != tc.ptr || e.Key != tc.key {
			t.Errorf("%s: %+v, want key %q in the object at %q", tc.text, e, tc.key, tc.ptr)
			continue
		}
		if got := tc.text[e.Offset]; got != '"' {
			t.Errorf("%s: offset %d is %q, not a name", tc.text, e.Offset, got)
		}
	}
}

// A model's answer has a few members per object: the walk allocates
// nothing for it.
func TestDuplicateKeyDoesNotAllocate(t *testing.T) {
	texts := [][]byte{
		[]byte(`{"category":"billing","priority":"high","summary":"Customer was charged twice for the March invoice and wants a refund.","needs_human":true}`),
		[]byte(`{"invoice_number":"INV-2024-0042","currency":"EUR","issue_date":"2024-03-01","line_items":[{"description":"Consulting \"senior\"","quantity":10,"unit_price":150,"amount":1500},{"description":"Travel","quantity":1,"unit_price":320.5,"amount":320.5}],"subtotal":1820.5,"tax":345.9,"total":2166.4}`),
		[]byte(`{"\u0070riority":"high","a":{"b":{"c":{"d":[1,2,{"e":"\\\""}]}}}}`),
	}
	n := testing.AllocsPerRun(100, func() {
		for _, b := range texts {
			if e := DuplicateKey(b); e != nil {
				t.Fatal(e)
			}
		}
	})
	if n != 0 {
		t.Fatalf("DuplicateKey allocates %v times per run", n)
	}
}

func BenchmarkDuplicateKey(b *testing.B) {
	text := []byte(`{"category":"billing","priority":"high","summary":"Customer was charged twice for the March invoice and wants a refund.","needs_human":true}`)
	b.ReportAllocs()
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		if DuplicateKey(text) != nil {
			b.Fatal("duplicate")
		}
	}
}

// Two names are the same exactly when encoding/json decodes them to the same
// string, whatever escapes spell them.
func TestDuplicateKeyMatchesEncodingJSON(t *testing.T) {
	names := []string{`"a"`, `"\u0061"`, `"\/"`, `"/"`, `"\ud83d\ude00"`, `"😀"`, `"\uD83D\uDE00"`, `"\n"`, `"\u000a"`,
		`"\""`, `"\u0022"`, `"\\"`, `"\u005c"`, `"é"`, `"\u00e9"`, `"\u00E9"`, `"e\u0301"`, `"ab"`, `"a\u0062"`, `"\t"`, `"\b"`, `""`}
	for _, x := range names {
		for _, y := range names {
			text := `{` + x + `:1,` + y + `:2}`
			var m map[string]any
			if err := json.Unmarshal([]byte(text), &m); err != nil {
				t.Fatal(err)
			}
			if got, want := DuplicateKey([]byte(text)) != nil, len(m) == 1; got != want {
				t.Errorf("%s: duplicate %v, encoding/json %v", text, got, want)
			}
		}
	}
}
