package race

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/store"
)

// An Anthropic-compatible server that counts the input only at the end
// (message_start says input_tokens 0: SGLang's, mlx-node's /v1/messages)
// streams part of an answer, then an error event (overloaded_error, as
// Anthropic sends mid-stream). docs/providers.md (error table, "stream ends
// without message_stop"): a stream broken after message_start — "stalled,
// timed out, an `error` event" — carries message_start's usage, "unless it
// reported no input tokens at all …, when the prompt and the part of the
// answer that came are estimated". The adapter drops the 0-input usage, as
// documented, but marks the error AnsweredWithError whatever had come
// (fromStreamErrorText / fromAnthropicError: refusedInStream(e, true)), and
// estimatedUsage steps aside for AnsweredWithError: the attempt — prompt
// received, part of an answer generated — is recorded with no usage and no
// cost.
func TestAnthropicErrorEventAfterZeroInputStartIsEstimated(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		for _, ev := range []struct{ typ, data string }{
			{"message_start", `{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"m","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":0,"output_tokens":1}}}`},
			{"content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`},
			{"content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"The customer was charged twice for the March invoice, and"}}`},
			{"error", `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`},
		} {
			fmt.Fprintf(w, "event: %s\ndata: %s\n\n", ev.typ, ev.data)
		}
	}))
	defer srv.Close()
	p, err := providers.NewAnthropic(providers.AnthropicConfig{Name: "compat", BaseURL: srv.URL, APIKey: "k", Model: "m", Stream: true})
	if err != nil {
		t.Fatal(err)
	}
	_, err = p.Complete(context.Background(), &providers.Request{Messages: []providers.Message{{Role: "user", Content: "Summarise the ticket."}}})
	pe, ok := providers.AsError(err)
	if !ok {
		t.Fatalf("err %v, want a *providers.Error", err)
	}
	if pe.Usage != nil {
		t.Fatalf("usage %+v: the 0-input usage should not be carried (documented)", *pe.Usage)
	}
	tgt, sp, a, _, in := estimateFixture(t, "Summarise the ticket.")
	u, estimated := estimatedUsage(tgt, sp, a, store.AttemptFailed, pe)
	if !estimated || u.PromptTokens != in || u.CompletionTokens == 0 {
		t.Errorf("kind %s, received %v, answered-with-error %v, partial %q: estimated=%v usage %+v; want the prompt (%d tokens) and the part that came estimated, as the docs say",
			pe.Kind, pe.Received, pe.AnsweredWithError, pe.Partial, estimated, u, in)
	}
}
