package config

import "fmt"

// The values of chat.keepalive: what a streaming chat caller is sent, while
// the router waits for a valid answer, as its sign of life (SPEC §15).
const (
	// KeepAliveComment is an SSE comment line, ": waiting for a valid
	// answer" (the default, as SPEC §15 words it).
	KeepAliveComment = "comment"
	// KeepAliveBlank is a bare blank line: every SSE client ignores it as
	// it does a comment, and proxies still see bytes, but clients that
	// gather a stream's non-data lines into its error event (go-openai) can
	// then read that event.
	KeepAliveBlank = "blank"
)

// BlankKeepAlive says whether chat.keepalive asks for a bare blank line as
// the streaming keep-alive; empty is the default, comment. Any other value
// is an error, as Load says; the server refuses one in a Config built in
// code with it too.
func (c Chat) BlankKeepAlive() (bool, error) {
	switch c.KeepAlive {
	case KeepAliveBlank:
		return true, nil
	case KeepAliveComment, "":
		return false, nil
	}
	return false, fmt.Errorf("chat.keepalive: %q is not %s or %s (omit it for the default, %s: an SSE comment line; %s sends a bare blank line, which go-openai's stream reader needs to read an error event sent after a keep-alive)",
		c.KeepAlive, KeepAliveComment, KeepAliveBlank, KeepAliveComment, KeepAliveBlank)
}
