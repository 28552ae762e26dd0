package api

import (
	"strings"
	"testing"

	"github.com/routerhq/router/internal/chat"
)

// TestRefusalsQuoteCallerStringsClipped (refusal_echo_bounded_test.go) holds
// every refusal that quotes the caller's value to a few hundred bytes
// (problem.Clip), so that a 0.9 MB request refused for one bad value is not
// answered with the value whole. Two chat refusals quoted it whole:
// reasoning_effort's ("%q" of the value) and a member of the wrong type whose
// value is a number (describeJSONError quoted encoding/json's
// UnmarshalTypeError.Value, "number <literal>"). Found by review (rchat7).
func TestChatRefusalsQuoteCallerValuesClipped(t *testing.T) {
	const maxDetail = 4 << 10
	big := strings.Repeat("<", 900_000) // JSON writes each as \u003c: 5.4 MB
	body := `{"model":"default","messages":[{"role":"user","content":"hi"}],"reasoning_effort":"` + big + `"}`
	var req chat.Request
	if err := decodeChat([]byte(body), &req); err != nil {
		t.Fatal(err)
	}
	if _, err := req.Normalize(); err == nil {
		t.Fatal("an unknown reasoning_effort was accepted")
	} else if len(err.Error()) > maxDetail {
		t.Errorf("reasoning_effort refusal: a message of %d bytes quotes the caller's value whole (want at most %d)", len(err.Error()), maxDetail)
	}
	body = `{"model":"default","messages":[{"role":"user","content":"hi"}],"max_tokens":1.` + strings.Repeat("0", 900_000) + `}`
	req = chat.Request{}
	err := decodeChat([]byte(body), &req)
	if err == nil {
		t.Fatal("a fractional max_tokens decoded")
	}
	if detail, _ := describeChatError(err); len(detail) > maxDetail {
		t.Errorf("wrong-type refusal: a message of %d bytes quotes the caller's number whole (want at most %d)", len(detail), maxDetail)
	}
}
