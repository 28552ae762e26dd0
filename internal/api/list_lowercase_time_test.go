package api_test

import (
	"testing"
)

// RFC 3339 (§5.6) allows the "T" and "Z" of a time in lowercase: such bounds
// list as their uppercase forms do.
func TestListTakesLowercaseTAndZ(t *testing.T) {
	b := setup(t, options{})
	b.create(t, acmeKey, "lower-tz", triageBody("one"), "Prefer", "wait=10")
	lower := b.list(t, acmeKey, "?created_after=2000-01-02t15:04:05z&created_before=2999-01-02t15:04:05.5z")
	upper := b.list(t, acmeKey, "?created_after=2000-01-02T15:04:05Z&created_before=2999-01-02T15:04:05.5Z")
	if len(lower.Data) != 1 || len(upper.Data) != 1 {
		t.Fatalf("lowercase bounds list %d jobs, uppercase %d; want 1 each", len(lower.Data), len(upper.Data))
	}
	if p := b.list(t, acmeKey, "?created_before=2000-01-02t15:04:05z"); len(p.Data) != 0 {
		t.Fatalf("a lowercase bound before the job lists %d jobs, want 0", len(p.Data))
	}
}
