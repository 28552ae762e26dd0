package providers

import (
	"bytes"
	"encoding/json"

	anthropic "github.com/anthropics/anthropic-sdk-go/v2"
)

// answeredMessage carries through the SDK, to CompleteStream, a streamed
// call's answer that came as one whole message (streamErrorObject).
type answeredMessage struct{ msg *anthropic.Message }

func (*answeredMessage) Error() string { return "the streamed call was answered with a whole message" }

// wholeMessage decodes body, the whole 2xx answer to a streamed call that is
// not labelled text/event-stream, as a Messages API message: a proxy that
// ignores stream:true answers so, Content-Type application/json. ok is false
// when it is not one (no "type":"message"): the body is then decoded as a
// stream, as before.
func wholeMessage(body []byte) (*anthropic.Message, bool) {
	var head struct {
		Type string `json:"type"`
	}
	body = bytes.TrimSpace(body)
	if json.Unmarshal(body, &head) != nil || head.Type != "message" {
		return nil, false
	}
	var msg anthropic.Message
	if json.Unmarshal(body, &msg) != nil {
		return nil, false
	}
	return &msg, true
}

// streamedWhole is the answer of a streamed call whose server sent the whole
// message instead of a stream (wholeMessage), judged as an unstreamed answer
// is (response: no stop_reason, a refusal, a paused turn, a tool call without
// id or name — each billed and received); onDelta sees its text as one
// delta.
func (p *Anthropic) streamedWhole(w *CallWatch, trace *callTrace, req *Request, msg *anthropic.Message, onDelta func(string)) (*Response, error) {
	if e := answeredMessageError(p.cfg.Name, trace, msg); e != nil {
		return nil, p.forRequest(req, e)
	}
	resp, err := p.response(msg)
	if resp != nil {
		resp.FirstByte = w.FirstByte()
		if onDelta != nil && resp.Content != "" {
			onDelta(resp.Content)
		}
		_, local := anthropicStops(req.Stop)
		cutAtStops(resp, local)
	}
	return resp, err
}
