package providers

import (
	"context"
	"errors"
	"testing"

	"github.com/routerhq/router/internal/providers/anthropicfake"
)

// A complete message from an Anthropic-compatible server that counts no
// input token (SGLang's, mlx-node's /v1/messages) carries no usage when it is
// a whole answer (f18df7e), so that the race estimates the prompt. The same
// message failed by its stop reason — a refusal, a paused turn, a stop
// reason the router does not know — is billed with the usage as the
// provider's own figures (Error.Usage): a prompt of 0 tokens, which the race
// keeps (billedOutcome estimates only an error with no usage), so the
// attempt is recorded and priced with no input cost, as the whole answer was
// before the fix.
func TestAnthropicBilledErrorZeroInputTokensCarriesNoUsage(t *testing.T) {
	for _, stop := range []string{"refusal", "pause_turn", "abort"} {
		fake := anthropicfake.New(t, fixedReply(anthropicfake.Reply{Text: "partial answer", StopReason: stop, InputTokens: 0, OutputTokens: 7}))
		for _, stream := range []bool{true, false} {
			_, err := newAnthropicAdapter(t, fake.URL, func(c *AnthropicConfig) { c.Stream = stream }).Complete(context.Background(), testRequest())
			var pe *Error
			if !errors.As(err, &pe) {
				t.Fatalf("stop_reason %s, stream=%v: err %v, want the adapter's *Error", stop, stream, err)
			}
			if pe.Usage != nil && pe.Usage.PromptTokens == 0 && !pe.Usage.Estimated {
				t.Errorf("stop_reason %s, stream=%v: billed usage %+v claims the provider billed a prompt of 0 tokens; want none (or an estimate), as for the whole answer",
					stop, stream, *pe.Usage)
			}
		}
	}
}
