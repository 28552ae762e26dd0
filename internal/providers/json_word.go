package providers

import "strings"

// MentionsJSON reports whether s contains "json" in any case, without
// allocating. OpenAI-compatible providers refuse a response_format of type
// json_object unless some message mentions JSON ("'messages' must contain
// the word 'json' in some form"): the chat endpoint and prompt rendering
// check it before anything is sent.
func MentionsJSON(s string) bool {
	for i := strings.IndexAny(s, "jJ"); i >= 0 && i+4 <= len(s); {
		if strings.EqualFold(s[i:i+4], "json") {
			return true
		}
		next := strings.IndexAny(s[i+1:], "jJ")
		if next < 0 {
			return false
		}
		i += 1 + next
	}
	return false
}
