package anthropicfake

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"
)

// The fake split the text and a tool's input at their middle byte, inside a
// multi-byte character: json.Marshal wrote each half as U+FFFD, and the fake
// streamed text that was not the one it was told to answer. Found by review.
func TestHalvesSplitOnCharacterBoundary(t *testing.T) {
	for _, s := range []string{"", "a", "é", "éé", "ééé", "hello world", "日本語", "a日", "🙂x", `{"k":"é"}`} {
		first, rest := halves(s)
		if first+rest != s || !utf8.ValidString(first) || !utf8.ValidString(rest) {
			t.Errorf("halves(%q) = %q, %q: not two whole-character parts of it", s, first, rest)
		}
		if s != "" && first == "" {
			t.Errorf("halves(%q): empty first part (the first delta CutAfterText and BlockAfter send)", s)
		}
	}
	if first, rest := halves("hello world"); first != "hello" || rest != " world" {
		t.Errorf("halves(hello world) = %q, %q: an ASCII text splits at its middle byte as before", first, rest)
	}
}

// recordingTB records the errors a fake reports, instead of failing the test.
type recordingTB struct {
	testing.TB
	mu     sync.Mutex
	errors []string
}

func (r *recordingTB) Errorf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.errors = append(r.errors, fmt.Sprintf(format, args...))
}

func (r *recordingTB) reported() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.errors...)
}

// CutAfterText and BlockAfter act after the first text delta: with no Text
// there is none, and the fake streamed a whole message — a test of a cut or
// a stall passed without either happening. The fake now fails the test, and
// sends no message_stop. Found by review.
func TestCutOrBlockWithoutTextFailsTheTest(t *testing.T) {
	for name, rep := range map[string]Reply{
		"CutAfterText": {CutAfterText: true, InputTokens: 3, OutputTokens: 2},
		"BlockAfter":   {BlockAfter: true, InputTokens: 3, OutputTokens: 2},
	} {
		rec := &recordingTB{TB: t}
		srv := New(rec, func(Request) Reply { return rep })
		res, err := http.Post(srv.URL+"/v1/messages", "application/json", strings.NewReader(`{"model":"m","max_tokens":5,"stream":true,"messages":[]}`))
		if err != nil {
			t.Fatal(err)
		}
		body, err := io.ReadAll(res.Body)
		res.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		if got := rec.reported(); len(got) != 1 || !strings.Contains(got[0], "need a Text") {
			t.Errorf("%s without Text: the fake reported %q, want one error naming the missing Text", name, got)
		}
		if strings.Contains(string(body), "message_stop") {
			t.Errorf("%s without Text: the fake sent a whole message:\n%s", name, body)
		}
	}
}
