package providers

import "testing"

// Gemini's OpenAI compatibility layer and some proxies stream tool calls
// with neither an index nor an id. Parallel calls sent each whole — in one
// delta or a chunk each, of two functions or of the same one — are a call
// each, and so are calls streamed name first, then arguments; a second
// function named at the same index without an id is the next call. They
// were merged into one call named after the last, with arguments
// `{"a":1}{"b":2}` (refused by the judge, failed over). A call whose deltas
// repeat its name is still one call. Found by review.
func TestStreamToolCallsWithoutIndexOrID(t *testing.T) {
	for name, c := range map[string]struct {
		deltas []string
		want   [][2]string // name, arguments
	}{
		"each whole in one delta": {[]string{
			`[{"type":"function","function":{"name":"f","arguments":"{\"a\":1}"}},{"type":"function","function":{"name":"g","arguments":"{\"b\":2}"}}]`,
		}, [][2]string{{"f", `{"a":1}`}, {"g", `{"b":2}`}}},
		"each whole, a chunk each, one function": {[]string{
			`[{"type":"function","function":{"name":"f","arguments":"{\"a\":1}"}}]`,
			`[{"type":"function","function":{"name":"f","arguments":"{\"a\":2}"}}]`,
		}, [][2]string{{"f", `{"a":1}`}, {"f", `{"a":2}`}}},
		"name, then arguments": {[]string{
			`[{"type":"function","function":{"name":"f","arguments":""}}]`,
			`[{"function":{"arguments":"{\"a\""}}]`,
			`[{"function":{"arguments":":1}"}}]`,
			`[{"type":"function","function":{"name":"f","arguments":""}}]`,
			`[{"function":{"arguments":"{}"}}]`,
		}, [][2]string{{"f", `{"a":1}`}, {"f", `{}`}}},
		"the name repeated in every delta": {[]string{
			`[{"type":"function","function":{"name":"f","arguments":"{\"a\""}}]`,
			`[{"function":{"name":"f","arguments":":1}"}}]`,
		}, [][2]string{{"f", `{"a":1}`}}},
		"two functions at one index": {[]string{
			`[{"index":0,"type":"function","function":{"name":"f","arguments":"{\"a\":1}"}}]`,
			`[{"index":0,"type":"function","function":{"name":"g","arguments":"{"}}]`,
			`[{"index":0,"function":{"arguments":"}"}}]`,
			`[{"index":0,"function":{"name":"g","arguments":""}}]`,
		}, [][2]string{{"f", `{"a":1}`}, {"g", `{}`}}},
	} {
		got := streamToolCalls(t, c.deltas...)
		ids := map[string]bool{}
		names := make([][2]string, len(got))
		for i, call := range got {
			names[i] = [2]string{call[1], call[2]}
			if call[0] == "" || ids[call[0]] {
				t.Errorf("%s: call %d has the id %q: want one of its own", name, i, call[0])
			}
			ids[call[0]] = true
		}
		if len(names) != len(c.want) {
			t.Errorf("%s: tool calls %q, want %q", name, names, c.want)
			continue
		}
		for i := range names {
			if names[i] != c.want[i] {
				t.Errorf("%s: tool calls %q, want %q", name, names, c.want)
				break
			}
		}
	}
}
