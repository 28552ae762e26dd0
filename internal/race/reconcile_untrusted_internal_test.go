package race

import (
	"testing"

	"github.com/routerhq/router/internal/store"
)

// An unknown attempt not sent to be recorded that its provider has no record
// of stays unknown and is looked up on every pass: it is warned about once,
// not on every pass, and forgotten once it is no longer unknown (as
// firstNoSpec's).
func TestUntrustedNoRecordWarnedOncePerAttempt(t *testing.T) {
	rc := newReconciler(1)
	if !rc.firstUntrusted("a1") {
		t.Fatal("first time: want a warning")
	}
	if rc.firstUntrusted("a1") {
		t.Fatal("second pass: warned again about the same attempt")
	}
	rc.erred["a1"] = true
	rc.order([]store.UnknownAttempt{{AttemptID: "a2"}}, true)
	if !rc.firstUntrusted("a1") {
		t.Fatal("after a1 left the listing: want it forgotten (warned anew)")
	}
}
