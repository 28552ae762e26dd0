package chat

import (
	"errors"
	"strings"
	"testing"
)

// OpenAI documents safety_identifier as "a string that uniquely identifies
// each user, with a maximum length of 128 characters" — the doc comment of
// ChatCompletionNewParams.SafetyIdentifier in github.com/openai/openai-go/v3
// v3.98.0, the version in go.mod (earlier SDKs said 64). The router refused
// anything past 64 (one limit shared with prompt_cache_key, whose limit is
// 64), so a request OpenAI takes — a SHA-512 hex digest of the user's
// email, "user_" + a SHA-256 hex digest — was a 400 from the drop-in.
// Found by review (rchat4 #2).
func TestSafetyIdentifierUpTo128Characters(t *testing.T) {
	for _, id := range []string{
		"user_" + strings.Repeat("ab", 32),    // 69: a prefixed SHA-256 hex digest
		strings.Repeat("0123456789abcdef", 8), // 128: a SHA-512 hex digest
	} {
		body := `{"model":"m","messages":[{"role":"user","content":"hi"}],"safety_identifier":"` + id + `"}`
		in, err := parse(t, body).Normalize()
		if err != nil {
			t.Errorf("safety_identifier of %d characters refused: %v", len(id), err)
			continue
		}
		if in.SafetyIdentifier != id {
			t.Errorf("safety_identifier stored as %q, want %q", in.SafetyIdentifier, id)
		}
	}
	// 129 stays refused, naming the field and its limit; prompt_cache_key
	// keeps OpenAI's 64, with its own message.
	for body, want := range map[string]struct{ param, says string }{
		`"safety_identifier":"` + strings.Repeat("a", 129) + `"`: {"safety_identifier", "safety_identifier is 129 characters long; at most 128 are allowed"},
		`"prompt_cache_key":"` + strings.Repeat("a", 65) + `"`:   {"prompt_cache_key", "prompt_cache_key is 65 characters long; at most 64 are allowed"},
	} {
		_, err := parse(t, `{"model":"m","messages":[{"role":"user","content":"hi"}],`+body+`}`).Normalize()
		var re *RequestError
		if !errors.As(err, &re) || re.Param != want.param || !strings.Contains(re.Message, want.says) {
			t.Errorf("%s…: %v, want param %s saying %q", body[:24], err, want.param, want.says)
		}
		if re != nil && strings.Count(re.Message, "(") > 1 {
			// It read "send a stable id of your end user (a hash of …)
			// of up to 128 characters (a hash, for example)".
			t.Errorf("%s…: two asides in one advice: %q", body[:24], re.Message)
		}
	}
	in, err := parse(t, `{"model":"m","messages":[{"role":"user","content":"hi"}],"prompt_cache_key":"`+strings.Repeat("k", 64)+`"}`).Normalize()
	if err != nil || len(in.PromptCacheKey) != 64 {
		t.Errorf("a 64-character prompt_cache_key: %v", err)
	}
}
