package tokens

import "unicode/utf8"

// EstimatedBytes bounds the text an estimate tokenizes: a longer text is
// counted from its head of this size and scaled by length, so that an
// answer or a resolution of up to the body limit does not cost a second of
// CPU (a usage estimate is a bill's best guess, not a window check).
const EstimatedBytes = 16 << 10

// EstimateTextFor is CountTextFor of text, or, for a text over
// EstimatedBytes, of its head of that size (cut at a rune boundary) scaled
// by text's length.
func EstimateTextFor(owner, encoding, text string) (int, error) {
	head := text
	if len(head) > EstimatedBytes {
		cut := EstimatedBytes
		for cut > EstimatedBytes-utf8.UTFMax && !utf8.RuneStart(head[cut]) {
			cut--
		}
		head = head[:cut]
	}
	n, err := CountTextFor(owner, encoding, head)
	if err != nil || len(head) == len(text) {
		return n, err
	}
	return int(int64(n) * int64(len(text)) / int64(len(head))), nil
}
