package race

import (
	"testing"

	"github.com/routerhq/router/internal/store"
)

// An attempt whose found answer cannot be judged because its job's route or
// prompt version is gone from the leader stays unknown and is looked up on
// every pass; its warning was logged on every pass too, for ever. The
// reconciler now warns once per attempt, and forgets the attempt once it is
// no longer unknown (so that a later attempt, or a later failure of it after
// a resolution, is warned about again). Found by review (rrecov12,
// suspicion 1).
func TestNoSpecWarnedOncePerAttempt(t *testing.T) {
	rc := newReconciler(1)
	if !rc.firstNoSpec("a1") {
		t.Fatal("first time: want a warning")
	}
	for pass := 2; pass <= 4; pass++ {
		if rc.firstNoSpec("a1") {
			t.Fatalf("pass %d: warned again about the same attempt", pass)
		}
	}
	if !rc.firstNoSpec("a2") {
		t.Fatal("another attempt: want its own warning")
	}
	// Unresolved lookups leave both in erred; a complete listing without a1
	// (resolved meanwhile) forgets it.
	rc.erred["a1"], rc.erred["a2"] = true, true
	rc.order([]store.UnknownAttempt{{AttemptID: "a2"}}, true)
	if !rc.firstNoSpec("a1") || rc.firstNoSpec("a2") {
		t.Fatal("after a1 left the listing: want a1 forgotten (warned anew) and a2 remembered")
	}
}
