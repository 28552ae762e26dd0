package providers

import (
	"fmt"
	"slices"

	anthropic "github.com/anthropics/anthropic-sdk-go/v2"
)

// blankUserTurn refuses a conversation with a user turn of blank text alone
// (empty or whitespace-only user messages, with nothing else between the
// assistant turns around them), and returns nil for any other. The chat API
// accepts such a message and OpenAI-compatible targets take it; the Messages
// API refuses a text block without text ("text content blocks must be
// non-empty", "… must contain non-whitespace text"), and leaving the turn out
// would send another conversation than the caller's: one ending on the
// assistant's turn, which Anthropic takes as the start of its own answer
// and continues (a prefill: the rest of the previous answer returned as the
// reply), one whose assistant turns around it join into one, one that
// starts with the assistant's turn, or none at all. As a conversation of a
// system prompt alone, it is refused before sending: the request's
// bad_request (the target's breaker does not count it), failed over to a
// target of the route that takes it. first[k] is the index in the request's
// messages of the first message of turn k, which the error names.
func (p *Anthropic) blankUserTurn(turns []anthropic.MessageParam, first []int) *Error {
	for k, t := range turns {
		if t.OfUser == nil || slices.ContainsFunc(t.OfUser.Content, func(b anthropic.ContentBlockParamUnion) bool {
			return b.OfText == nil || !blank(b.OfText.Text)
		}) {
			continue
		}
		var why string
		switch {
		case len(turns) == 1:
			why = "no user or assistant message would be left"
		case k == len(turns)-1:
			why = "it would end on the assistant's message, which Anthropic continues as a prefill instead of replying to it"
		case k == 0:
			why = "it would start with the assistant's message"
		default:
			why = "the assistant messages before and after it would be joined into one"
		}
		e := badRequest(p.cfg.Name, fmt.Sprintf("messages[%d]: the user message is empty or whitespace only and nothing else is in its turn: "+
			"Anthropic's Messages API refuses a text block without text, and leaving the message out would change the conversation (%s); "+
			"give it some text, remove it, or route the request to an OpenAI-compatible provider", first[k], why))
		e.Action = ActionFailover
		return e
	}
	return nil
}
