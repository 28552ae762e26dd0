package store

import (
	"strings"
	"testing"
)

// recentJobColumns is jobColumns with the input, params and result read as
// NULL: should a change of jobColumns' parts put one of them back, the
// dashboard would read every job's input again. This says so.
func TestRecentJobColumnsDropInputParamsResult(t *testing.T) {
	if n := strings.Count(recentJobColumns, "NULL::jsonb"); n != 3 {
		t.Fatalf("recentJobColumns replaced %d of input, params, result (want 3): jobColumns changed shape?\n%s", n, recentJobColumns)
	}
	for _, c := range []string{"j.input", "j.params", "j.result"} {
		if strings.Contains(recentJobColumns, c) {
			t.Fatalf("recentJobColumns still reads %s", c)
		}
	}
}
