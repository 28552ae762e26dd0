package providers

// plainTap keeps the body of a streamed call's 2xx answer as long as it holds
// no data line: a server that ignores stream:true answers with the whole
// chat.completion JSON, which go-openai reads as lines of no event and ends
// as a stream without a chunk. The adapter decodes the kept body and judges
// it as an unstreamed answer (openAIPlainAnswer).
//
// A stream's first kept line is a data line (comments and event fields are
// dropped before), so an ordinary stream stops the tap at once and nothing
// is copied. A body that is not SSE is kept whole; it is bounded by the
// call's max_response_bytes, like every body.
type plainTap struct {
	off  bool // a data line came: the body is a stream, nothing is kept
	body []byte
}

// startLine is called at the start of each line the filter keeps, with its
// first byte: a data line ("data:"; JSON never starts a line with 'd') turns
// the tap off.
func (t *plainTap) startLine(first byte) {
	if !t.off && first == 'd' {
		t.off, t.body = true, nil
	}
}

// feed is called with each part of a kept line, in order.
func (t *plainTap) feed(seg []byte) {
	if !t.off {
		t.body = append(t.body, seg...)
	}
}

// plain is the body kept, nil when it held a data line.
func (t *plainTap) plain() []byte {
	if t.off {
		return nil
	}
	return t.body
}
