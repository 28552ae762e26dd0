package metrics_test

import (
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/routerhq/router/internal/metrics"
	"github.com/routerhq/router/internal/providers"
)

// docsRow is the row of docs/operations.md's metrics table for metric name.
func docsRow(t *testing.T, name string) string {
	t.Helper()
	raw, err := os.ReadFile("../../docs/operations.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(raw), "\n") {
		if strings.HasPrefix(line, "| `"+name+"` |") {
			return line
		}
	}
	t.Fatalf("docs/operations.md has no row for %s", name)
	return ""
}

// The HELP of a labelled metric lists the label values the code uses and
// docs/operations.md lists: router_db_batch_size's said (claim, win, renew)
// without the webhook deliveries' kinds, router_attempts_total's left out
// unsent. Found by review.
func TestHelpListsTheDocumentedLabelValues(t *testing.T) {
	d := metrics.NewDB()
	m := metrics.New(metrics.Options{DB: d, NoProcessCollectors: true})
	// One sample each, so that the families are exposed.
	d.Batch("claim", 1)
	m.AttemptFinished("p", "primary", "won", "", time.Millisecond, providers.Usage{})
	fams := scrape(t, m.Handler())
	for name, values := range map[string][]string{
		"router_db_batch_size":  {"claim", "win", "renew", "delivery", "delivery_read"},
		"router_attempts_total": {"won", "lost", "failed", "invalid", "unknown", "cancelled", "abandoned", "unsent"},
	} {
		f, ok := fams[name]
		if !ok {
			t.Fatalf("no family %s", name)
		}
		row := docsRow(t, name)
		for _, v := range values {
			word := regexp.MustCompile(`\b` + regexp.QuoteMeta(v) + `\b`)
			if !word.MatchString(f.GetHelp()) {
				t.Errorf("%s HELP %q does not list %s", name, f.GetHelp(), v)
			}
			if !word.MatchString(row) {
				t.Errorf("docs/operations.md's row of %s does not list %s (the test's list is out of date?)", name, v)
			}
		}
	}
}
