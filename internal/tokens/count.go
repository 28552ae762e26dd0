package tokens

import (
	"math"

	"github.com/pkoukk/tiktoken-go"

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
// It does not use the count cache: a count of text sent for an owner (a job's
// prompt, its answer) goes through CountTextFor.
func CountText(encoding, text string) (int, error) {
	return countText(scope{}, encoding, text)
}

// CountTextFor is CountText of owner's text, through owner's part of the
// count cache: a count remembered for one owner is never another's.
func CountTextFor(owner, encoding, text string) (int, error) {
	return countText(ownedBy(owner), encoding, text)
}

func countText(s scope, encoding, text string) (int, error) {
	tk, err := get(encoding)
	if err != nil {
		return 0, err
	}
	return s.count(encoding, tk, text), nil
}

// CountMessages counts the prompt tokens of a chat request: for each message 3
// plus its role's, content's and refusal's tokens (an assistant message's
// refusal is sent: OpenAI's "refusal", Anthropic's text), plus 3 for the
// reply's priming. A
// message's name costs its tokens plus TokensPerName; its tool-call id and
// its tool calls (counted as their JSON text, as given: Counted makes it the
// compact text the adapters send; it over-counts OpenAI's own rendering of
// them slightly) cost their tokens. Its reasoning_content is not counted:
// only providers with send_reasoning_content are sent it, and the count is
// one per encoding for the whole route (TestReasoningContentIsNotCounted).
// It does not use the count cache: owner's
// messages are counted with CountMessagesFor.
func CountMessages(encoding string, msgs []providers.Message) (int, error) {
	return countMessages(scope{}, encoding, msgs)
}

// CountMessagesFor is CountMessages of owner's messages, through owner's
// part of the count cache: a count remembered for one owner is never
// another's.
func CountMessagesFor(owner, encoding string, msgs []providers.Message) (int, error) {
	return countMessages(ownedBy(owner), encoding, msgs)
}

func countMessages(s scope, encoding string, msgs []providers.Message) (int, error) {
	n, _, err := countMessagesUpTo(s, encoding, msgs, math.MaxInt)
	return n, err
}

// CountMessagesUpToFor is CountMessagesFor that stops counting once the
// count passes limit (after a chunk of text, encodeCount's): exact false says
// it stopped with some of msgs not counted, and msgs then have more than n
// tokens (n, the count so far, is over limit). A count that did not pass
// limit is exact. Routing counts up to the most room any target it judges
// has: past that the prompt fits none, and counting the rest of a long
// request would cost CPU in proportion to the body, not to the window.
func CountMessagesUpToFor(owner, encoding string, msgs []providers.Message, limit int) (n int, exact bool, err error) {
	return countMessagesUpTo(ownedBy(owner), encoding, msgs, limit)
}

func countMessagesUpTo(s scope, encoding string, msgs []providers.Message, limit int) (n int, exact bool, err error) {
	tk, err := get(encoding)
	if err != nil {
		return 0, false, err
	}
	c := messageCount{s: s, encoding: encoding, tk: tk, limit: limit, n: TokensReplyPrime}
	for _, m := range msgs {
		if c.n > limit {
			return c.n, false, nil // each message left costs TokensPerMessage at least
		}
		c.n += TokensPerMessage
		c.add(m.Role)
		c.add(m.Content)
		c.add(m.Refusal)
		if m.Name != "" {
			c.n += TokensPerName
			c.add(m.Name)
		}
		if m.ToolCallID != "" {
			c.add(m.ToolCallID)
		}
		if len(m.ToolCalls) > 0 {
			c.add(string(m.ToolCalls))
		}
	}
	return c.n, !c.cut, nil
}

// messageCount is a count of messages in progress (countMessagesUpTo): cut
// says a text was left (partly) uncounted because n had passed limit.
type messageCount struct {
	s        scope
	encoding string
	tk       *tiktoken.Tiktoken
	limit, n int
	cut      bool
}

// add counts text's tokens into n, unless n is past limit already; it stops
// within text once n passes limit.
func (c *messageCount) add(text string) {
	if text == "" {
		return
	}
	if c.cut || c.n > c.limit {
		c.cut = true
		return
	}
	k, whole := c.s.countUpTo(c.encoding, c.tk, text, c.limit-c.n)
	c.n += k
	c.cut = !whole
}

// Fits reports whether msgs plus maxTokens of answer fit a context window. need is
// the prompt's tokens plus maxTokens. A contextWindow of 0 or less is unknown and
// always fits. It does not use the count cache (FitsFor does).
func Fits(encoding string, msgs []providers.Message, maxTokens, contextWindow int) (need int, ok bool, err error) {
	return fits(scope{}, encoding, msgs, maxTokens, contextWindow)
}

// FitsFor is Fits of owner's messages, counted through owner's part of the
// count cache (CountMessagesFor).
func FitsFor(owner, encoding string, msgs []providers.Message, maxTokens, contextWindow int) (need int, ok bool, err error) {
	return fits(ownedBy(owner), encoding, msgs, maxTokens, contextWindow)
}

func fits(s scope, encoding string, msgs []providers.Message, maxTokens, contextWindow int) (need int, ok bool, err error) {
	n, err := countMessages(s, encoding, msgs)
	if err != nil {
		return 0, false, err
	}
	need, ok = FitsCount(n, maxTokens, contextWindow)
	return need, ok, nil
}

// FitsCount is Fits of a prompt of n tokens, counted already.
func FitsCount(n, maxTokens, contextWindow int) (need int, ok bool) {
	maxTokens = max(maxTokens, 0)
	if maxTokens > math.MaxInt-n { // a caller's max_tokens near MaxInt must not wrap to a small need
		return math.MaxInt, contextWindow <= 0
	}
	need = n + maxTokens
	return need, contextWindow <= 0 || need <= contextWindow
}
