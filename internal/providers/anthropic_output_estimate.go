package providers

// estimatedBytesPerToken is the rule of thumb (OpenAI's, for English text)
// the Anthropic adapter estimates an answer's output tokens by when the
// stream gave no count (the race recounts it with the tokenizer).
const estimatedBytesPerToken = 4

// estimateOutput marks the usage of a whole streamed answer whose
// message_delta gave no output count (a gateway that strips it) as
// Estimated, and raises its completion tokens to an estimate of the answer —
// its reasoning (thinking blocks), content and tool calls, at
// estimatedBytesPerToken — when that is more than message_start's
// provisional count (1, given before any output was generated). Taken as the provider's exact figure, a 2,000-word answer was
// recorded, priced and reported to the caller as one output token. The input
// tokens stay Anthropic's. The race recounts an estimated answer with the
// target's tokenizer when it can (answerUsage).
func estimateOutput(r *Response) {
	n := (len(r.ReasoningContent) + len(r.Content) + len(r.ToolCalls) + estimatedBytesPerToken - 1) / estimatedBytesPerToken
	if n > r.Usage.CompletionTokens {
		r.Usage.TotalTokens += n - r.Usage.CompletionTokens
		r.Usage.CompletionTokens = n
	}
	r.Usage.Estimated = true
}
