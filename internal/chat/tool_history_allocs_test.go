package chat

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// agentBody is an agent's request: one tool, and a history of 20 assistant
// turns of 2 parallel calls each, with their tool replies.
func agentBody() []byte {
	var b strings.Builder
	b.WriteString(`{"model":"m","tools":[{"type":"function","function":{"name":"f1","parameters":{"type":"object","properties":{"a":{"type":"string"}}}}}],"messages":[{"role":"user","content":"hi"}`)
	for i := 0; i < 20; i++ {
		fmt.Fprintf(&b, `,{"role":"assistant","content":null,"tool_calls":[{"id":"c%d","type":"function","function":{"name":"f1","arguments":"{\"a\":\"x\"}"}},{"id":"d%d","type":"function","function":{"name":"f1","arguments":"{}"}}]},{"role":"tool","tool_call_id":"c%d","content":"r"},{"role":"tool","tool_call_id":"d%d","content":"r"}`, i, i, i, i)
	}
	b.WriteString(`]}`)
	return []byte(b.String())
}

func agentRequests(t testing.TB, n int) []Request {
	body := agentBody()
	reqs := make([]Request, n)
	for i := range reqs {
		if err := json.Unmarshal(body, &reqs[i]); err != nil {
			t.Fatal(err)
		}
	}
	return reqs
}

// Agents resend their whole history on every turn, and the tool-history
// checks decoded each call four times and formatted its field names before
// any error: Normalize of this request went from 174 allocations to 1,961.
// The calls are decoded once, and messages are built only on failure. The
// bound is generous (the checks add about one allocation per call); it fails
// at the slow version. Found by review.
func TestNormalizeToolHistoryAllocations(t *testing.T) {
	reqs := agentRequests(t, 101)
	i := 0
	allocs := testing.AllocsPerRun(100, func() {
		if _, err := reqs[i].Normalize(); err != nil {
			t.Fatal(err)
		}
		i++
	})
	if allocs > 400 {
		t.Errorf("Normalize of a 40-call tool history: %.0f allocations per request; was 174 before the tool-history checks", allocs)
	}
}

func BenchmarkNormalizeToolHistory(b *testing.B) {
	reqs := agentRequests(b, b.N)
	b.ReportAllocs()
	b.ResetTimer()
	for i := range reqs {
		if _, err := reqs[i].Normalize(); err != nil {
			b.Fatal(err)
		}
	}
}
