package api_test

import (
	"testing"
)

// An operation filter that is not UTF-8 text (bytes that are not UTF-8, a
// NUL) is a 400 naming the parameter (SPEC §17: input that is not valid UTF-8
// is a 400), not an empty page as if no job had that operation (found by
// review).
func TestListOperationNotUTF8IsRejected(t *testing.T) {
	b := setup(t, options{})
	for _, q := range []string{"?operation=tri%FFage", "?operation=%ff", "?operation=%00", "?operation=triage%00", "?state=failed&operation=%C3"} {
		wantListRejected(t, b, q, "operation must be UTF-8 text without NUL")
	}
	// UTF-8 text is an operation's name, here one no job has and this router
	// does not run: refused as unknown, not as malformed.
	wantListRejected(t, b, "?operation=tri%C3%A9age", `operation "triéage" is not an operation this router runs`, "did you mean triage?")
}
