package api

import (
	"encoding/json"

	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/race"
	"github.com/routerhq/router/internal/store"
	"github.com/routerhq/router/internal/tokens"
)

// resolvedUsage is the usage of the chat completion a "succeeded" resolution
// of attempt a makes with answer as the answer (its texts: a chat answer's
// reasoning, content and tool calls, counted one by one as the race counts a
// live answer's). The provider reported none
// (the attempt's answer never came): as for any answer without usage
// (docs/chat.md), it is the router's estimate, marked Estimated, not zeros —
// an SDK that meters by usage would record a free call. The prompt's count
// is the attempt's stored usage (the race's estimate of the prompt it sent,
// with its target's tokenizer); the completion's is the answer counted with
// that tokenizer, raising the completion tokens (and the total by as much)
// when the stored count is lower, as the race raises a provisional count.
// An attempt with no prompt count stored — one recovery marked unknown
// after its router died, which has no usage at all — has the prompt, prompt
// (the request's counted messages: tokens.Counted), counted here as its race
// would have (race.PromptEstimate), and the total raised by as much: the
// provider billed the prompt too, usually most of the tokens. prompt is
// called only then, and nil or an empty list counts nothing. raised is false
// when nothing was raised: the attempt's usage stands.
func resolvedUsage(job *store.Job, a *store.Attempt, answer []string, prompt func() []providers.Message) (u providers.Usage, raised bool) {
	if len(a.Usage) > 0 {
		_ = json.Unmarshal(a.Usage, &u) // null or unreadable: none
	}
	enc := attemptEncoding(job.Routing, a)
	if u.PromptTokens == 0 && prompt != nil {
		if msgs := prompt(); len(msgs) > 0 {
			if n, ok := race.PromptEstimate(job.Owner, enc, msgs); ok {
				u.PromptTokens, u.Estimated, raised = n, true, true
				u.TotalTokens += n
			}
		}
	}
	n, ok := answerTokens(job.Owner, enc, answer)
	if !ok || n <= u.CompletionTokens {
		return u, raised
	}
	u.TotalTokens += n - u.CompletionTokens
	u.CompletionTokens, u.Estimated = n, true
	return u, true
}

// attemptEncoding is the tokenizer attempt a's target counts with: the one
// routing recorded for a's provider (the target's `tokenizer`, or its model's),
// else its model's.
func attemptEncoding(routing json.RawMessage, a *store.Attempt) string {
	var decisions []struct {
		Provider string `json:"provider"`
		Encoding string `json:"encoding"`
	}
	_ = json.Unmarshal(routing, &decisions)
	for _, d := range decisions {
		if d.Provider == a.Provider && d.Encoding != "" {
			return d.Encoding
		}
	}
	enc, _ := tokens.EncodingForModel("", a.Model)
	return enc
}

// answerTokens counts texts' tokens with encoding for owner, as the race
// estimates an answer (tokens.EstimateTextFor: a long text from its head,
// scaled by length; each text on its own, "" counting nothing). ok is false
// when the tokenizer cannot count.
func answerTokens(owner, encoding string, texts []string) (n int, ok bool) {
	for _, text := range texts {
		if text == "" {
			continue
		}
		m, err := tokens.EstimateTextFor(owner, encoding, text)
		if err != nil {
			return 0, false
		}
		n += m
	}
	return n, true
}
