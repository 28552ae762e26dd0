package chat

import (
	"encoding/json"
	"slices"
	"testing"
)

// toolCallCorpus holds tool_calls the scanner must judge as slowToolCalls
// does: valid ones, and ones that differ from a valid call in one member.
var toolCallCorpus = []string{
	`[]`, ` [ ] `, `null`, `{}`, `"x"`, `[null]`, `["c1"]`, `[1]`, `[[]]`, `[{}]`,
	`[{"id":"c1","type":"function","function":{"name":"f","arguments":"{}"}}]`,
	` [ { "id" : "c1" , "type" : "function" , "function" : { "name" : "f" , "arguments" : "{\"a\":1}" } } ] `,
	`[{"id":"c1","type":"function","function":{"name":"f"}},{"id":"c2","type":"function","function":{"name":"g","arguments":""}}]`,
	`[{"id":"c1","type":"function","function":{"name":"f","arguments":"{}"},"index":0}]`,
	`[{"id":"c1","type":"function","function":{"name":"f","arguments":"{}"},"index":null}]`,
	`[{"id":"c1","type":"function","function":{"name":"f","arguments":"{}"},"index":-3}]`,
	`[{"id":"c1","type":"function","function":{"name":"f","arguments":"{}"},"index":1.5}]`,
	`[{"id":"c1","type":"function","function":{"name":"f","arguments":"{}"},"index":1e2}]`,
	`[{"id":"c1","type":"function","function":{"name":"f","arguments":"{}"},"index":"1"}]`,
	`[{"id":"c1","type":"function","function":{"name":"f","arguments":"{}"},"index":99999999999999999999}]`,
	`[{"id":"c1","type":"function","function":{"name":"f","arguments":"{}"},"refusal":null,"audio":{"id":"x"},"extra":[1,{"a":"]}"}]}]`,
	`[{"ID":"c1","type":"function","function":{"name":"f","arguments":"{}"}}]`,
	`[{"id":"c1","Type":"function","function":{"Name":"f","ARGUMENTS":"{}"}}]`,
	`[{"id":"c1","type":"function","function":{"name":"f","argumentſ":"{x"}}]`,
	`[{"i\u0064":"c1","type":"function","function":{"name":"f","arguments":"{}"}}]`,
	`[{"id":"c\u0031","type":"function","function":{"name":"f","arguments":"{}"}}]`,
	`[{"id":"c1","type":"functio\u006e","function":{"name":"f","arguments":"{}"}}]`,
	`[{"id":"c1","type":"function","function":{"name":"\u0066","arguments":"{}"}}]`,
	`[{"id":"c1","id":"c2","type":"function","function":{"name":"f","arguments":"{}"}}]`,
	`[{"id":"c1","id":5,"type":"function","function":{"name":"f","arguments":"{}"}}]`,
	`[{"id":"c1","type":"function","function":{"name":"f"},"function":{"arguments":"{}"}}]`,
	`[{"id":"","type":"function","function":{"name":"f","arguments":"{}"}}]`,
	`[{"id":7,"type":"function","function":{"name":"f","arguments":"{}"}}]`,
	`[{"id":null,"type":"function","function":{"name":"f","arguments":"{}"}}]`,
	`[{"id":"c1","function":{"name":"f","arguments":"{}"}}]`,
	`[{"id":"c1","type":"custom","function":{"name":"f","arguments":"{}"}}]`,
	`[{"id":"c1","type":null,"function":{"name":"f","arguments":"{}"}}]`,
	`[{"id":"c1","type":"function"}]`,
	`[{"id":"c1","type":"function","function":null}]`,
	`[{"id":"c1","type":"function","function":"f"}]`,
	`[{"id":"c1","type":"function","function":{"name":"","arguments":"{}"}}]`,
	`[{"id":"c1","type":"function","function":{"name":null,"arguments":"{}"}}]`,
	`[{"id":"c1","type":"function","function":{"arguments":"{}"}}]`,
	`[{"id":"c1","type":"function","function":{"name":"f","arguments":null}}]`,
	`[{"id":"c1","type":"function","function":{"name":"f","arguments":{}}}]`,
	`[{"id":"c1","type":"function","function":{"name":"f","arguments":"{x"}}]`,
	`[{"id":"c1","type":"function","function":{"name":"f","arguments":"  \n "}}]`,
	`[{"id":"c1","type":"function","function":{"name":"f","arguments":"{\"a\":\"\\u00e9\\ud83d\\ude00\\ud800\"}"}}]`,
	`[{"id":"c1","type":"function","function":{"name":"f","arguments":"{\"a\":\"\u0022}"}}]`,
	`[{"id":"c1","type":"function","function":{"name":"f","arguments":"\"\\/\\b\\f\\n\\r\\t\""}}]`,
	`[{"id":"c1","type":"function","function":{"name":"f","arguments":"{}"}},]`,
	`[{"id":"c1","type":"function","function":{"name":"f","arguments":"{}"}}] x`,
	`[{"id":"c1","type":"function","function":{"name":"f","arguments":"{}"}}`,
	"[{\"id\":\"c\xff\",\"type\":\"function\",\"function\":{\"name\":\"f\",\"arguments\":\"{}\"}}]",
	"[{\"id\":\"c1\",\"type\":\"function\",\"function\":{\"name\":\"f\",\"arguments\":\"[\\\"\xff\\\"]\"}}]",
	`[{"id":"c1","type":"function","function":{"name":"get weather","arguments":"{}"}}]`,
	`[{"id":"c1","type":"function","function":{"name":"weather.get","arguments":"{}"}}]`,
	`[{"id":"c1","type":"function","function":{"name":"g\u0065t_weather-2","arguments":"{}"}}]`,
	"[{\"id\":\"c1\",\"type\":\"function\",\"function\":{\"name\":\"Zo\u00eb\",\"arguments\":\"{}\"}}]",
}

// The scanner accepts only what slowToolCalls, which decodes the calls into
// go-openai's types, accepts, with the same ids; what it leaves, the slow
// path decides.
func TestScanToolCallsAgreesWithDecoding(t *testing.T) {
	for _, raw := range toolCallCorpus {
		checkScanAgrees(t, []byte(raw))
	}
	// The shapes SDKs send take the fast path.
	for _, raw := range toolCallCorpus[10:16] {
		if _, ok := scanToolCalls([]byte(raw), nil); !ok {
			t.Errorf("%s: left to decoding", raw)
		}
	}
	for _, raw := range toolCallCorpus[20:21] {
		if _, ok := scanToolCalls([]byte(raw), nil); !ok {
			t.Errorf("%s: left to decoding", raw)
		}
	}
}

func FuzzScanToolCalls(f *testing.F) {
	for _, raw := range toolCallCorpus {
		f.Add([]byte(raw))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		if json.Valid(raw) {
			checkScanAgrees(t, raw)
		}
	})
}

func checkScanAgrees(t *testing.T, raw []byte) {
	t.Helper()
	fast, ok := scanToolCalls(raw, []string{"before"})
	slow, err := slowToolCalls(0, raw, []string{"before"})
	if ok && (err != nil || !slices.Equal(fast, slow)) {
		t.Errorf("%s: scanned as %q; decoding gives %q, %v", raw, fast, slow, err)
	}
	if !ok && !slices.Equal(fast, []string{"before"}) {
		t.Errorf("%s: ids %q left after the scanner gave up", raw, fast)
	}
}
