package api

import "testing"

// Only a request that every target excluded for its context window is too
// long; one excluded elsewhere for another reason (a breaker) may fit later.
func TestTooLongForEvery(t *testing.T) {
	for _, c := range []struct {
		routing string
		want    bool
	}{
		{`[{"provider":"a","eligible":false,"reason":"context window too small: the prompt needs 9 tokens"},
		   {"provider":"b","eligible":false,"reason":"context window too small: max_tokens 9 alone fills the window of 8 tokens"}]`, true},
		{`[{"provider":"a","eligible":false,"reason":"context window too small: the prompt needs 9 tokens"},
		   {"provider":"b","eligible":false,"reason":"circuit breaker open after 5 consecutive failures"}]`, false},
		{`[{"provider":"a","eligible":false,"reason":"conformance not passed"}]`, false},
		{`[]`, false},
		{``, false},
	} {
		if _, _, got := tooLongForEvery([]byte(c.routing)); got != c.want {
			t.Errorf("%s: %v, want %v", c.routing, got, c.want)
		}
	}
	// The field to blame, as OpenAI names it.
	if _, param, _ := tooLongForEvery([]byte(`[{"provider":"a","eligible":false,"reason":"context window too small: max_tokens 9 alone fills the window of 8 tokens"}]`)); param != "max_tokens" {
		t.Errorf("max_tokens alone fills every window: param %q, want max_tokens", param)
	}
	if _, param, _ := tooLongForEvery([]byte(`[{"provider":"a","eligible":false,"reason":"context window too small: max_tokens 9 alone fills the window of 8 tokens"},
		{"provider":"b","eligible":false,"reason":"context window too small: the prompt needs 9 tokens"}]`)); param != "messages" {
		t.Errorf("the prompt too long for one window: param %q, want messages", param)
	}
}
