package providers

import (
	"bytes"
	"cmp"
	"encoding/json"

	openai "github.com/sashabaranov/go-openai"
)

// plainCompletion decodes body, the whole 2xx answer to a streamed call that
// held no data line (callTrace.streamPlainBody), as a chat.completion: a
// server that ignores stream:true (some proxies and local servers) answers
// so. ok is false when it is not one (an object named otherwise, or one with
// neither an object name nor choices): the stream then ended without a
// chunk, as it did.
func plainCompletion(body []byte) (resp openai.ChatCompletionResponse, ok bool) {
	body = bytes.TrimSpace(body)
	if len(body) == 0 || body[0] != '{' {
		return resp, false
	}
	if err := json.Unmarshal(body, &resp); err != nil {
		if !usageTypeError(err) {
			return resp, false
		}
		if resp, ok = lenientCompletion(body); !ok {
			return resp, false
		}
	}
	if resp.Object != "" && resp.Object != "chat.completion" {
		return resp, false
	}
	return resp, resp.Object != "" || len(resp.Choices) > 0
}

// streamedPlain is the answer of a streamed call whose server sent the whole
// chat.completion JSON resp instead of a stream (plainCompletion), judged as
// an unstreamed answer is (response: no choices, a filter, a finish reason
// that does not say it is whole, a tool call without id or name — each billed
// and received); onDelta sees its content as one delta. body is resp's bytes,
// whose tool calls' extra_content go-openai does not keep (responseBody).
func (p *OpenAI) streamedPlain(w *CallWatch, resp openai.ChatCompletionResponse, body []byte, model string, onDelta func(string)) (*Response, error) {
	out, err := p.responseBody(body, resp.ID, cmp.Or(resp.Model, model), resp.Created, resp.Choices, resp.Usage)
	if out != nil {
		out.FirstByte = w.FirstByte()
		out.SystemFingerprint = fingerprint(resp.SystemFingerprint)
		if onDelta != nil && out.Content != "" {
			onDelta(out.Content)
		}
	}
	return out, err
}
