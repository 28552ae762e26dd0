package main

import (
	"context"
	"strings"
	"testing"
)

// A DATABASE_URL of only white space (a stray newline from a secret file) is
// refused, as the configuration refuses it, rather than run the command on a
// database localdb did not start and the command cannot reach: localdb used
// to take it as set and hand " " on.
func TestLocalDBRefusesABlankDatabaseURL(t *testing.T) {
	t.Setenv("DATABASE_URL", " \n")
	var code int
	_, stderr := captureOutput(t, func() {
		code = run(context.Background(), []string{"localdb", "--dir", t.TempDir(), "--", "true"})
	})
	if code != 2 || !strings.Contains(stderr, "DATABASE_URL is set but empty or only white space") {
		t.Fatalf("localdb with DATABASE_URL=%q: exit code %d, stderr:\n%s\nwant exit code 2 saying it is blank", " \n", code, stderr)
	}
}
