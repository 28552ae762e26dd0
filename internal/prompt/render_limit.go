package prompt

import (
	"bytes"
	"fmt"
)

// MaxRenderedBytes bounds a job's rendered prompt, all its messages together.
// A template that prints one input value once for each element of another
// (the document once per question) renders their sizes multiplied, which the
// caller chooses: a 1 MiB body could render tens of GiB on the request path,
// before the token check sees it. 16 MiB is twice what the largest context
// windows served (2M tokens) hold at a generous 4 bytes a token, so no prompt
// a model could take is refused; and over twice what a default 1 MiB body
// renders through a template that prints each value once, even escaped
// (json, js and html make text at most 6 times longer).
const MaxRenderedBytes = 16 << 20

// errRenderedTooLarge stops a render that passes MaxRenderedBytes: the
// caller's input makes the template print too much.
var errRenderedTooLarge = fmt.Errorf("the rendered prompt passes %d MiB (%d bytes, all messages together), more than any model's context window holds: "+
	"this input makes the template print too much (a value printed once for each element of an array, say); send a smaller input (shorter text, fewer elements)",
	MaxRenderedBytes>>20, MaxRenderedBytes)

// cappedBuffer is what a message renders into: a write that would take it
// past limit fails, and text/template's Execute stops at the first write
// that fails, so no more than limit bytes are ever held. The check is a
// comparison per write; nothing is copied beyond the buffer's own write.
type cappedBuffer struct {
	buf   bytes.Buffer
	limit int
}

func (b *cappedBuffer) Write(p []byte) (int, error) {
	if len(p) > b.limit-b.buf.Len() {
		return 0, errRenderedTooLarge
	}
	return b.buf.Write(p)
}
