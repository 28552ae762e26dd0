package providers

import (
	"bytes"
	"encoding/json"
	"unicode/utf8"

	"github.com/routerhq/router/internal/jsontext"
)

// maxServiceTier bounds the service_tier a provider's answer names, as the
// router keeps it: OpenAI's are a word ("default", "priority"); a longer one
// is clipped, not stored whole from whatever a server sends.
const maxServiceTier = 64

// providerServiceTier is the service_tier a provider answered with, as the
// router keeps it (Response.ServiceTier): sanitised for storage and clipped
// to maxServiceTier bytes at a character's start.
func providerServiceTier(s string) string {
	s = jsontext.SanitizeString(s)
	if len(s) <= maxServiceTier {
		return s
	}
	n := maxServiceTier
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// topString is the string value of the top-level member name of b, a JSON
// object that has decoded (an answer, a stream chunk), as encoding/json
// reads it (the last member of that name); "" when b has none, or its value
// is not a string. A name written with escapes is not looked for (no server
// writes its member names so). Only the member's value is decoded: go-openai's stream
// chunk has no service_tier, and decoding a whole answer again for one word
// would double its cost.
func topString(b []byte, name string) string {
	if !bytes.Contains(b, []byte(name)) {
		return ""
	}
	var val []byte
	i := jsontext.SkipSpace(b, 0)
	if i >= len(b) || b[i] != '{' {
		return ""
	}
	for i = jsontext.SkipSpace(b, i+1); i < len(b) && b[i] == '"'; {
		end, escaped := jsontext.StringEnd(b, i)
		if end-1 <= i || end > len(b) {
			return "" // not valid JSON
		}
		match := !escaped && string(b[i+1:end-1]) == name
		i = jsontext.SkipSpace(b, end)
		if i >= len(b) || b[i] != ':' {
			return ""
		}
		start := jsontext.SkipSpace(b, i+1)
		i = jsontext.SkipValue(b, start)
		if i > len(b) || i <= start {
			return ""
		}
		if match {
			val = b[start:i]
		}
		if i = jsontext.SkipSpace(b, i); i >= len(b) || b[i] != ',' {
			break
		}
		i = jsontext.SkipSpace(b, i+1)
	}
	var s string
	if val == nil || json.Unmarshal(val, &s) != nil {
		return ""
	}
	return s
}
