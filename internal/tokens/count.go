package tokens

import (
	"math"

	"github.com/routerhq/router/internal/providers"
)

// Chat framing overhead, from OpenAI's cookbook ("How to count tokens with
// tiktoken") for gpt-3.5-turbo-0613 and later, gpt-4 and gpt-4o: every message
// costs 3 tokens besides its role and content, and every reply is primed with 3.
const (
	TokensPerMessage = 3
	TokensReplyPrime = 3
	TokensPerName    = 1 // besides the name's own tokens
)

// CountText counts the tokens of text. Special-token text such as
// "<|endoftext|>" is counted as ordinary text, as chat APIs treat user content.
func CountText(encoding, text string) (int, error) {
	tk, err := get(encoding)
	if err != nil {
		return 0, err
	}
	return countCached(encoding, tk, text), nil
}

// CountMessages counts the prompt tokens of a chat request: for each message 3
// plus its role's, content's and refusal's tokens (an assistant message's
// refusal is sent: OpenAI's "refusal", Anthropic's text), plus 3 for the
// reply's priming. A
// message's name costs its tokens plus TokensPerName; its tool-call id and
// its tool calls (counted as their JSON text, as given: Counted makes it the
// compact text the adapters send; it over-counts OpenAI's own rendering of
// them slightly) cost their tokens.
func CountMessages(encoding string, msgs []providers.Message) (int, error) {
	tk, err := get(encoding)
	if err != nil {
		return 0, err
	}
	n := TokensReplyPrime
	for _, m := range msgs {
		n += TokensPerMessage + countCached(encoding, tk, m.Role) + countCached(encoding, tk, m.Content) +
			countCached(encoding, tk, m.Refusal)
		if m.Name != "" {
			n += TokensPerName + countCached(encoding, tk, m.Name)
		}
		if m.ToolCallID != "" {
			n += countCached(encoding, tk, m.ToolCallID)
		}
		if len(m.ToolCalls) > 0 {
			n += countCached(encoding, tk, string(m.ToolCalls))
		}
	}
	return n, nil
}

// Fits reports whether msgs plus maxTokens of answer fit a context window. need is
// the prompt's tokens plus maxTokens. A contextWindow of 0 or less is unknown and
// always fits.
func Fits(encoding string, msgs []providers.Message, maxTokens, contextWindow int) (need int, ok bool, err error) {
	n, err := CountMessages(encoding, msgs)
	if err != nil {
		return 0, false, err
	}
	maxTokens = max(maxTokens, 0)
	if maxTokens > math.MaxInt-n { // a caller's max_tokens near MaxInt must not wrap to a small need
		return math.MaxInt, contextWindow <= 0, nil
	}
	need = n + maxTokens
	return need, contextWindow <= 0 || need <= contextWindow, nil
}
