package main

import (
	"context"
	"strings"
	"testing"
)

// `router help` lists each command's summary in one column, after its name
// with room between: `conformance`, wider than the column was, ran into its
// summary ("conformance run the conformance suites…"). Found by review.
func TestUsageSummariesStartInOneColumn(t *testing.T) {
	stdout, _ := captureOutput(t, func() { run(context.Background(), []string{"help"}) })
	lines := strings.Split(stdout, "\n")
	column := -1
	for _, c := range commands() {
		if c.hidden {
			continue
		}
		found := false
		for _, l := range lines {
			if !strings.HasPrefix(l, "  "+c.name+" ") {
				continue
			}
			found = true
			at := strings.Index(l, c.summary)
			if at < 0 {
				t.Fatalf("line of %s %q lacks its summary %q", c.name, l, c.summary)
			}
			if gap := l[len("  "+c.name):at]; len(gap) < 2 || strings.TrimSpace(gap) != "" {
				t.Errorf("%s and its summary are apart by %q; want two spaces at least", c.name, gap)
			}
			if column >= 0 && at != column {
				t.Errorf("the summary of %s starts at column %d, others' at %d:\n%s", c.name, at, column, stdout)
			}
			column = at
		}
		if !found {
			t.Errorf("router help does not list %s:\n%s", c.name, stdout)
		}
	}
}
