package providers

import (
	"encoding/json"
	"errors"

	openai "github.com/sashabaranov/go-openai"
)

// Mistral's Magistral models stream delta.content as an array of parts (a
// "thinking" part, then "text" parts), as their unstreamed message.content
// is; go-openai's delta holds content as a string only, so such a chunk does
// not decode (contentPartsTypeError). It is decoded again with its delta's
// content kept raw (looseStreamChoice), and that content read as the
// unstreamed answer's is (answerContent): its text parts, joined.

// contentPartsTypeError reports a decoding error on a choice's
// delta.content that is an array: the chunk may be whole, with its content
// in parts.
func contentPartsTypeError(err error) bool {
	var te *json.UnmarshalTypeError
	return errors.As(err, &te) && te.Field == "choices.delta.content" && te.Value == "array"
}

// looseStreamChoice is a chunk's choice with its delta's content kept as
// JSON (a string, null, or an array of parts): the embedded choice's Delta,
// and the embedded delta's Content, are shadowed, so encoding/json fills
// these instead.
type looseStreamChoice struct {
	openai.ChatCompletionStreamChoice
	Delta struct {
		openai.ChatCompletionStreamChoiceDelta
		Content json.RawMessage `json:"content"`
	} `json:"delta"`
}

// choice is c in go-openai's form, its content the text of its parts
// (streamedContent); ok is false when the content is neither a string nor an
// array of parts.
func (c *looseStreamChoice) choice() (ch openai.ChatCompletionStreamChoice, ok bool) {
	ch = c.ChatCompletionStreamChoice
	ch.Delta = c.Delta.ChatCompletionStreamChoiceDelta
	ch.Delta.Content, ok = streamedContent(c.Delta.Content)
	return ch, ok
}

// streamedContent is a delta's content, v: a string as it is, an array of
// parts as answerContent reads the unstreamed answer's (its "text" parts
// joined, its "thinking" parts not content), null or absent as "".
func streamedContent(v json.RawMessage) (string, bool) {
	if len(v) == 0 || string(v) == "null" {
		return "", true
	}
	if v[0] == '[' {
		var parts []openai.ChatMessagePart
		if json.Unmarshal(v, &parts) != nil {
			return "", false
		}
		return answerContent(openai.ChatCompletionMessage{MultiContent: parts}), true
	}
	var s string
	if json.Unmarshal(v, &s) != nil {
		return "", false
	}
	return s, true
}
