package providers

import (
	"errors"
	"io"
	"time"
)

// drainGraceMax bounds the read of a stream's body after its answer is
// whole: a gateway that keeps the connection open, silent or with keep-alives,
// must not hold the answer until a deadline throws it away.
const drainGraceMax = 250 * time.Millisecond

// drainGrace is how long the body of a whole stream is read on: drainGraceMax,
// or the idle deadline when it is shorter.
func drainGrace(idle time.Duration) time.Duration {
	if idle > 0 && idle < drainGraceMax {
		return idle
	}
	return drainGraceMax
}

// brokenAfterEnd reports whether err, the read error of a stream whose answer
// is already whole (OpenAI: its finish_reason came, at the end of its answer
// — one that came early, streamAcc.finishEarly, waits for [DONE]; Anthropic:
// message_stop), is the connection breaking at the network level — a reset, or a body cut
// without HTTP/1.1's chunked terminator (io.ErrUnexpectedEOF), as a gateway
// does that drops the connection right after the last event. Such a stream
// ended with its answer: it is returned, not failed over and paid for twice.
//
// A deadline the router set (the idle deadline is excused separately:
// CallWatch.Stalled), a cancellation, max_response_bytes and a timeout of
// the transport's own are not the stream's end: they keep their meaning.
func brokenAfterEnd(w *CallWatch, err error) bool {
	if err == nil || w.Classify(err) != nil {
		return false
	}
	if _, ok := tooLarge("", err); ok {
		return false
	}
	if errors.Is(err, io.ErrUnexpectedEOF) {
		return true
	}
	return Classify("", err).Kind == KindConnReset
}
