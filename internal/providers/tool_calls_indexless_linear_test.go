package providers

import (
	"encoding/json"
	"strings"
	"testing"

	openai "github.com/sashabaranov/go-openai"
)

// docs/providers.md: "A provider that repeats the name in every delta of a
// call still has its deltas joined until the arguments are whole." Whether
// they were whole was json.Valid over all the arguments received so far,
// for every such delta: a call of n bytes cost O(n²) (a 7 MiB stream of
// 1 KiB deltas took 3m45s of CPU, against 1.2 s with an index on each). It
// is followed as the deltas come (argsShape), and json.Valid runs once a
// value has ended: here the work is counted — the bytes json.Valid scanned
// for one 800 KiB call (quadratic: about 800 times its size; linear: once
// or twice) — and the calls are still told apart as before.
func TestIndexlessToolDeltasAreAssembledInLinearWork(t *testing.T) {
	var acc streamAcc
	add := func(name, args string) {
		t.Helper()
		d := openai.ToolCall{Type: openai.ToolTypeFunction, Function: openai.FunctionCall{Name: name, Arguments: args}}
		if err := acc.addToolCall(d, nil); err != nil {
			t.Fatal(err)
		}
	}
	piece := strings.Repeat(`x,{[\"`, 1024/8) // brackets and escaped quotes inside the string
	add("get_weather", `{"city":"`)
	for range 800 {
		add("get_weather", piece)
	}
	add("get_weather", `"} `)
	add("get_weather", `{"city":"Paris"}`) // a whole call of the same function: the next one
	add("get_time", `{}`)

	calls := acc.toolCalls()
	if len(calls) != 3 {
		t.Fatalf("%d calls, want 3", len(calls))
	}
	first := calls[0].Function.Arguments
	var v struct{ City string }
	if err := json.Unmarshal([]byte(first), &v); err != nil || v.City != strings.Repeat(`x,{["`, 800*1024/8) {
		t.Fatalf("the first call's arguments (%d bytes) do not decode to the city sent: %v", len(first), err)
	}
	if calls[1].Function.Arguments != `{"city":"Paris"}` || calls[2].Function.Name != "get_time" {
		t.Fatalf("calls %+v", calls[1:])
	}
	scanned := 0
	for _, cs := range acc.tools {
		for _, tc := range cs {
			scanned += tc.shape.scanned
		}
	}
	if total := len(first) + len(calls[1].Function.Arguments) + 2; scanned > 2*total {
		t.Errorf("telling %d bytes of index-less deltas apart scanned %d bytes (%dx): quadratic", total, scanned, scanned/total)
	}
}

// argsShape.whole is json.Valid of the arguments followed, whatever the
// deltas they came in (but for a top-level scalar longer than maxScalarArgs,
// never a tool's arguments).
func TestArgsShapeIsJSONValid(t *testing.T) {
	for _, args := range []string{
		``, ` `, `{}`, ` {} `, `{"a":1}`, `{"a":"}"}`, `{"a":"\"}"}`, `{"a":"\\"}`, `{"a":"\\"}}`, `{}{}`, `{} x`,
		`[1,2]`, `]`, `}{`, `{"a":[}`, `"s"`, `"s" `, `"s`, `1`, `12 `, `1 2`, `true`, `tru`, `null`, `nul l`,
		`1{}`, `{"a":1`, `{"a":"b\`, `{"a":"b\"`, `[[]]`, `[[]`, `{"a":tru}`, "\t{}\n",
	} {
		for _, split := range []int{1, 2, 3, 100} {
			var a argsShape
			var sofar strings.Builder
			for i := 0; i < len(args); i += split {
				part := args[i:min(i+split, len(args))]
				a.add(part)
				sofar.WriteString(part)
				if got, want := a.whole(sofar.String()), json.Valid([]byte(sofar.String())); got != want {
					t.Errorf("%q in deltas of %d, after %q: whole %v, json.Valid %v", args, split, sofar.String(), got, want)
				}
			}
		}
	}
}
