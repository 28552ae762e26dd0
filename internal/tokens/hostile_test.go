package tokens_test

import (
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/pkoukk/tiktoken-go"

	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/tokens"
)

// SPEC §17: a caller's input is hostile. tiktoken-go's byte-pair merge is
// quadratic in the length of one pre-tokenized piece, and its pre-tokenizer
// backtracks over whitespace runs: 32 KiB of one letter took 1.5 s, 1 MiB (the
// default body limit) about half an hour of one core, per job. Counting must
// stay roughly linear in the text, and still give a sensible count.
func TestCountText_HostileRunsStayLinear(t *testing.T) {
	const n = 256 << 10
	for _, tc := range []struct {
		name, text string
		min        int // a lower bound of the true count
	}{
		{"letters", strings.Repeat("a", n), n / 8},
		{"accented", strings.Repeat("é", n/2), n / 16},
		{"punctuation", strings.Repeat("!", n), n / 16},
		{"spaces", strings.Repeat(" ", n) + "x", n / 256},
		{"newline-space", strings.Repeat("\n ", n/2) + "x", n / 8},
	} {
		for _, enc := range []string{tokens.O200kBase, tokens.Cl100kBase} {
			got, err := tokens.CountText(enc, tc.text)
			if err != nil {
				t.Fatal(err)
			}
			if got < tc.min || got > len(tc.text) {
				t.Errorf("%s/%s: %d tokens for %d bytes, want at least %d", tc.name, enc, got, len(tc.text), tc.min)
			}
		}
	}
}

// Bounding the work must not change the count of ordinary text: it is still
// exactly tiktoken's, however long the text.
func TestCountText_LongOrdinaryTextIsExact(t *testing.T) {
	para := triageInput + "\n\n" + invoiceInput + "\n\tfunc main() {\n\t\tfmt.Println(\"héllo, 世界\")  \n\t}\n" +
		"Straße  über   naïve café — it's, they're, I'LL; 1234567 12.50 EUR\r\n"
	text := strings.Repeat(para, 40) // about 50 KiB
	for _, enc := range []string{tokens.O200kBase, tokens.Cl100kBase, tokens.P50kBase, tokens.R50kBase} {
		got, err := tokens.CountText(enc, text)
		if err != nil {
			t.Fatal(err)
		}
		tk, err := tiktoken.GetEncoding(enc)
		if err != nil {
			t.Fatal(err)
		}
		if want := len(tk.EncodeOrdinary(text)); got != want {
			t.Errorf("%s: CountText = %d, tiktoken says %d", enc, got, want)
		}
	}
}

// A chat request's names, tool-call ids and tool calls are sent to the model
// and use its context window: counting only roles and contents let a request
// whose history holds a long tool call pass for one that fits.
func TestCountMessages_NamesAndToolCalls(t *testing.T) {
	enc := tokens.O200kBase
	base := []providers.Message{{Role: "user", Content: "What is the weather in Paris?"}}
	n0, err := tokens.CountMessages(enc, base)
	if err != nil {
		t.Fatal(err)
	}
	args := strings.Repeat("sunny with light wind, ", 200)
	calls, _ := json.Marshal([]map[string]any{{"id": "call_abc123", "type": "function",
		"function": map[string]any{"name": "get_weather", "arguments": `{"notes":"` + args + `"}`}}})
	argTokens, _ := tokens.CountText(enc, args)

	named := append(append([]providers.Message(nil), base...), providers.Message{Role: "user", Name: "maria_from_finance", Content: "and Berlin?"})
	bare := append(append([]providers.Message(nil), base...), providers.Message{Role: "user", Content: "and Berlin?"})
	nNamed, _ := tokens.CountMessages(enc, named)
	nBare, _ := tokens.CountMessages(enc, bare)
	nameTokens, _ := tokens.CountText(enc, "maria_from_finance")
	if nNamed != nBare+nameTokens+1 { // OpenAI cookbook: a name costs its tokens plus 1
		t.Errorf("a named message counts %d, the same unnamed %d; want the name's %d tokens + 1 more", nNamed, nBare, nameTokens)
	}

	withCalls := append(append([]providers.Message(nil), base...),
		providers.Message{Role: "assistant", ToolCalls: calls},
		providers.Message{Role: "tool", ToolCallID: "call_abc123", Content: "18°C"})
	nCalls, err := tokens.CountMessages(enc, withCalls)
	if err != nil {
		t.Fatal(err)
	}
	if nCalls < n0+argTokens {
		t.Errorf("history with a tool call of %d argument tokens counts %d, only %d more than without it", argTokens, nCalls, nCalls-n0)
	}
	need, ok, err := tokens.Fits(enc, withCalls, 100, n0+argTokens/2)
	if err != nil || ok {
		t.Errorf("Fits = %d, %v, %v: the tool call alone overflows the window of %d", need, ok, err, n0+argTokens/2)
	}
}

// A max_tokens near the largest int (a caller's number) must not wrap the need
// around to a small one that fits.
func TestFits_HugeMaxTokensDoesNotWrap(t *testing.T) {
	msgs := []providers.Message{{Role: "user", Content: "hello"}}
	need, ok, err := tokens.Fits(tokens.O200kBase, msgs, math.MaxInt, 128000)
	if err != nil || ok || need < 128000 {
		t.Errorf("Fits(max_tokens MaxInt, window 128000) = %d, %v, %v; want a need beyond the window, not fitting", need, ok, err)
	}
	if _, ok, _ := tokens.Fits(tokens.O200kBase, msgs, math.MaxInt, 0); !ok {
		t.Error("an unknown window (0) always fits")
	}
}
