package prompt

import "strings"

// delimiters are the openings of chat-template control text that servers
// applying a model's chat template (vLLM, Ollama, llama.cpp) read as special
// tokens, or as turn boundaries, wherever the text has them: in a caller's
// string printed with {{ json .text }} they would close the user's turn from
// inside the quotes. Each is written with its first character escaped
// (\u003c for <, \u005b for [), so the JSON string decodes to the same text
// but no longer holds the token. None can occur outside a JSON string (JSON
// has no < and no [ followed by a letter or /), so only string contents
// change. Each list holds what follows the character it is named after.
var (
	afterLess = []string{
		"|",                              // <|im_start|> (ChatML: Qwen and many others), <|eot_id|> (Llama 3), <|end|> (gpt-oss, Phi)
		"\uff5c",                         // <｜User｜> (DeepSeek's fullwidth bars)
		"start_of_turn>", "end_of_turn>", // Gemma
		"s>", "/s>", // <s>, </s> (Llama 2, Mistral)
		"bos>", "eos>", // <bos>, <eos> (Gemma)
	}
	afterBracket = []string{ // Llama 2, Mistral
		"INST]", "/INST]", "SYSTEM_PROMPT]", "/SYSTEM_PROMPT]",
		"TOOL_CALLS]", "AVAILABLE_TOOLS]", "/AVAILABLE_TOOLS]", "TOOL_RESULTS]", "/TOOL_RESULTS]",
	}
)

// escapeDelimiters escapes the delimiters in s, JSON text; s itself when it
// has none (no copy: most text has no < at all, and no [ before INST). It
// looks for < and [ each with IndexByte, which is vectorised (IndexAny of the
// two tests one byte at a time): 5 KB of text with neither takes 0.3 µs.
func escapeDelimiters(s string) string {
	var b strings.Builder
	done := 0 // s[:done] is written to b
	less, bracket := indexFrom(s, 0, '<'), indexFrom(s, 0, '[')
	for less < len(s) || bracket < len(s) {
		i, escaped, rests := less, `\u003c`, afterLess
		if bracket < less {
			i, escaped, rests = bracket, `\u005b`, afterBracket
		}
		for _, rest := range rests {
			if strings.HasPrefix(s[i+1:], rest) {
				if done == 0 {
					b.Grow(len(s) + 16)
				}
				b.WriteString(s[done:i])
				b.WriteString(escaped)
				done = i + 1
				break
			}
		}
		if i == less {
			less = indexFrom(s, i+1, '<')
		} else {
			bracket = indexFrom(s, i+1, '[')
		}
	}
	if done == 0 {
		return s
	}
	b.WriteString(s[done:])
	return b.String()
}

// indexFrom is the index of the first c in s from i on, or len(s).
func indexFrom(s string, i int, c byte) int {
	if j := strings.IndexByte(s[i:], c); j >= 0 {
		return i + j
	}
	return len(s)
}
