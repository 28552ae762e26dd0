package config

import "testing"

// chat.keepalive is comment (the default, SPEC §15's SSE comment line) or
// blank (a bare blank line); any other value is refused at load, naming both.
func TestChatKeepAlive(t *testing.T) {
	for y, wantBlank := range map[string]bool{
		"chat: {}\n":                           false,
		"chat: {keepalive: comment}\n":         false,
		"chat: {keepalive: blank}\n":           true,
		"chat: {keepalive: \"\"}\n":            false, // as log.format: empty is the default
		"chat: {wait: 1m}\nlog: {}\n":          false,
		"chat: {keepalive: blank, wait: 1m}\n": true,
	} {
		c, err := Parse([]byte(y))
		if err != nil {
			t.Errorf("refused %q: %v", y, err)
			continue
		}
		if blank, err := c.Chat.BlankKeepAlive(); err != nil || blank != wantBlank {
			t.Errorf("%q: blank keep-alive %v (%v), want %v", y, blank, err, wantBlank)
		}
	}
	if c, _ := Parse([]byte("chat: {}\n")); c.Chat.KeepAlive != KeepAliveComment {
		t.Errorf("chat.keepalive left out is %q, want %q", c.Chat.KeepAlive, KeepAliveComment)
	}
	for _, v := range []string{"Blank", "blank-line", "none", "' blank'"} {
		mustRefuse(t, "chat: {keepalive: "+v+"}\n", "chat.keepalive: ", "is not comment or blank", "omit it for the default, comment")
	}
	// A Config built in code is checked by the same method (the server does).
	if _, err := (Chat{KeepAlive: "newline"}).BlankKeepAlive(); err == nil {
		t.Error(`chat.keepalive "newline" built in code was accepted`)
	}
}
