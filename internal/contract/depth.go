package contract

import "fmt"

// MaxAnswerDepth is how deeply an answer's arrays and objects may nest: the
// answer's own object is one level, each array or object inside it one more.
// An answer is delivered one level or more down — in the job ("result"), the
// wait answer, the webhook event, a resolution's body, a chat completion's
// tool call — and readers bound nesting: encoding/json at 10,000 levels (so
// an answer of 10,000 could not be read in its job), Python's json at about
// 1,000. 512 leaves room for every envelope and for those readers.
const MaxAnswerDepth = 512

// TooDeep is the json.too_deep violation for JSON text b whose arrays and
// objects nest more than MaxAnswerDepth deep, nil otherwise: an answer that
// cannot be delivered, refused as json.syntax is (the provider's in a
// prompt job, the caller's response_format in a chat job: chat.ProviderRule).
func TooDeep(b []byte) *Violation {
	depth, inString := 0, false
	for i := 0; i < len(b); i++ {
		c := b[i]
		if inString {
			switch c {
			case '\\':
				i++ // the escaped byte: never a quote that ends the string
			case '"':
				inString = false
			}
			continue
		}
		switch c {
		case '"':
			inString = true
		case '[', '{':
			if depth++; depth > MaxAnswerDepth {
				return &Violation{Rule: "json.too_deep", Path: "$", Message: fmt.Sprintf(
					"the output nests arrays and objects more than %d deep (at byte %d); the router delivers an answer inside its job, "+
						"whose readers refuse deeper nesting, so an answer may nest at most %d levels", MaxAnswerDepth, i, MaxAnswerDepth)}
			}
		case ']', '}':
			depth--
		}
	}
	return nil
}
