package providers

import (
	"context"
	"errors"
	"time"
)

// errAnswerGraceEnded is the cause with which answerGrace ends the read of
// a stream whose answer is whole.
var errAnswerGraceEnded = errors.New("the stream's answer was whole and the read after it ran out of grace")

// answerGrace bounds the read of an OpenAI-compatible stream after its
// finish_reason, when that finish_reason says the answer is whole (neither
// streamAcc.finishEarly nor an unconfirmed streamAcc.finishFirst): only its
// usage chunk and [DONE] are still to come, and a gateway that sends neither,
// keeping the connection open with SSE comments, must not hold the answer
// until the attempt's timeout throws it away. Comments do not renew it: the
// grace ends the read (by cancelling the request's own context, which
// unblocks a body read) however many keep-alives come, and the answer is
// returned as it stands.
//
// Its length is OpenAI.answerGrace: stream_idle_timeout from the
// finish_reason while the usage chunk may still come (keep-alives no longer
// renew that deadline, as they do the idle deadline), drainGrace from the
// usage chunk of an answer whose finish_reason came on an empty delta, when
// only [DONE] is left.
type answerGrace struct {
	end   context.CancelCauseFunc
	timer *time.Timer
	d     time.Duration
}

// set starts the grace of d when on, or shortens a longer one to d from now;
// off stops it (more of the answer came: it is whole only at [DONE]).
func (g *answerGrace) set(on bool, d time.Duration) {
	if !on || g.timer != nil && d < g.d {
		g.stop()
	}
	if !on || g.timer != nil {
		return
	}
	g.d = d
	g.timer = time.AfterFunc(d, func() { g.end(errAnswerGraceEnded) })
}

func (g *answerGrace) stop() {
	if g.timer != nil {
		g.timer.Stop()
		g.timer = nil
	}
}

// ended reports whether the grace ended the read of the stream whose
// context is ctx.
func (g *answerGrace) ended(ctx context.Context) bool {
	return errors.Is(context.Cause(ctx), errAnswerGraceEnded)
}
