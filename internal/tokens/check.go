package tokens

import (
	"fmt"
	"sort"
	"strings"

	"github.com/pkoukk/tiktoken-go"
)

// specialTokens are the special-token strings of the offline encodings
// (o200k_base and cl100k_base use a subset). Some providers refuse text containing
// them; others tokenize it as control tokens.
var specialTokens = []string{
	tiktoken.ENDOFTEXT, tiktoken.FIM_PREFIX, tiktoken.FIM_MIDDLE, tiktoken.FIM_SUFFIX, tiktoken.ENDOFPROMPT,
}

// ContainsSpecialTokens returns the special-token strings found in text, sorted
// and without duplicates; nil when there are none.
func ContainsSpecialTokens(text string) []string {
	if !strings.Contains(text, "<|") {
		return nil
	}
	var found []string
	for _, s := range specialTokens {
		if strings.Contains(text, s) {
			found = append(found, s)
		}
	}
	sort.Strings(found)
	return found
}

// RoundTrip checks that text encodes and decodes back to itself, byte for byte,
// under an encoding. A failure means the tokenizer would change the text (for
// example invalid UTF-8) and the count cannot be trusted.
func RoundTrip(encoding, text string) error {
	tk, err := get(encoding)
	if err != nil {
		return err
	}
	got := tk.Decode(tk.EncodeOrdinary(text))
	if got == text {
		return nil
	}
	i := 0
	for i < len(got) && i < len(text) && got[i] == text[i] {
		i++
	}
	return fmt.Errorf("%s does not round-trip the text: it differs from byte %d (input %d bytes, decoded %d bytes)", encoding, i, len(text), len(got))
}
