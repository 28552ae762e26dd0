package api

import (
	"testing"
	"time"
)

// A comma or semicolon inside a quoted value of another preference separates
// nothing (RFC 9110 §5.6.4): foo="a,wait=1" holds no wait preference, so the
// wait is the 30 s that follows it (found by review: the header was split at
// every comma, and the wait read as 1 s).
func TestPreferredWaitSkipsQuotedSeparators(t *testing.T) {
	for _, c := range []struct {
		values []string
		want   time.Duration
		ok     bool
	}{
		{[]string{`foo="a,wait=1", wait=30`}, 30 * time.Second, true},
		{[]string{`foo="a;wait=1", wait=30`}, 30 * time.Second, true},
		{[]string{`foo="a\",wait=1", wait=30`}, 30 * time.Second, true}, // an escaped quote ends nothing
		{[]string{`foo="a\\", wait=30`}, 30 * time.Second, true},        // an escaped backslash, then the end of the value
		{[]string{`foo;p="x,wait=2";q=1, wait=30`}, 30 * time.Second, true},
		{[]string{`foo="unterminated, wait=30`}, 0, false},
		{[]string{`foo="a,wait=1"`, `wait=30`}, 30 * time.Second, true},
		{[]string{`wait="30"`}, 30 * time.Second, true},
		{[]string{`respond-async, wait=7;x=y, wait=0`}, 7 * time.Second, true},
		{[]string{`wait=5, wait=0`}, 5 * time.Second, true},
		{[]string{`wait=soon`, `wait=30`}, 0, false},
		{[]string{`respond-async`}, 0, false},
	} {
		if d, ok := preferredWait(c.values); d != c.want || ok != c.ok {
			t.Errorf("preferredWait(%q) = %v, %v; want %v, %v", c.values, d, ok, c.want, c.ok)
		}
	}
}
