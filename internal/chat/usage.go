package chat

import (
	"strconv"

	"github.com/routerhq/router/internal/providers"
)

// Usage is a completion's usage: the provider's (or the router's estimate,
// Estimated), written in OpenAI's shape. OpenAI always sends
// prompt_tokens_details (cached_tokens, audio_tokens) and
// completion_tokens_details (reasoning_tokens, audio_tokens,
// accepted_prediction_tokens, rejected_prediction_tokens), and SDK code reads
// usage.prompt_tokens_details.cached_tokens without a check for null: both
// objects are always written, each member 0 when the provider reported none.
// A stored completion written before they were (each object left out when
// zero) decodes as before, and is written again with them.
type Usage providers.Usage

// MarshalJSON writes u with every member of both detail objects, in
// OpenAI's order, and "estimated": true only on the router's own count.
func (u Usage) MarshalJSON() ([]byte, error) {
	b := make([]byte, 0, 320)
	field := func(sep, name string, n int) {
		b = append(b, sep...)
		b = append(b, '"')
		b = append(b, name...)
		b = append(b, `":`...)
		b = strconv.AppendInt(b, int64(n), 10)
	}
	field("{", "prompt_tokens", u.PromptTokens)
	field(",", "completion_tokens", u.CompletionTokens)
	field(",", "total_tokens", u.TotalTokens)
	p, c := u.PromptTokensDetails, u.CompletionTokensDetails
	field(`,"prompt_tokens_details":{`, "cached_tokens", p.CachedTokens)
	field(",", "audio_tokens", p.AudioTokens)
	field(`},"completion_tokens_details":{`, "reasoning_tokens", c.ReasoningTokens)
	field(",", "audio_tokens", c.AudioTokens)
	field(",", "accepted_prediction_tokens", c.AcceptedPredictionTokens)
	field(",", "rejected_prediction_tokens", c.RejectedPredictionTokens)
	b = append(b, '}')
	if u.Estimated {
		b = append(b, `,"estimated":true`...)
	}
	return append(b, '}'), nil
}
