package config

import (
	"strings"
	"testing"
	"time"
)

// retention.conformance_runs bounds the conformance history: left out it is
// 90 days, 0s keeps every run (a written zero is not the default), and a
// negative value, or one shorter than a run may take, is refused, naming
// the setting and its range.
func TestConformanceRunsRetention(t *testing.T) {
	t.Setenv("DATABASE_URL", "")
	for _, tc := range []struct {
		written string
		want    time.Duration
		refused bool
	}{
		{"", 2160 * time.Hour, false},
		{"retention: {conformance_runs: 0s}\n", 0, false},
		{"retention: {conformance_runs: 0}\n", 0, false},
		{"retention: {conformance_runs: 24h}\n", 24 * time.Hour, false},
		{"retention: {conformance_runs: 8760h}\n", 8760 * time.Hour, false},
		{"retention: {conformance_runs: -1h}\n", 0, true},
		{"retention: {conformance_runs: 1h}\n", 0, true},
	} {
		c, err := Parse([]byte(defaultsBase + tc.written))
		switch {
		case tc.refused && err == nil:
			t.Errorf("%q: taken as %s, want refused", tc.written, c.Retention.ConformanceRuns.D())
		case tc.refused && !strings.Contains(err.Error(), "retention.conformance_runs") || tc.refused && !strings.Contains(err.Error(), "0s (keep every run) or at least 24h"):
			t.Errorf("%q: refused with %v, want the setting and its range named", tc.written, err)
		case !tc.refused && err != nil:
			t.Errorf("%q: %v", tc.written, err)
		case !tc.refused && (c.Retention.ConformanceRuns == nil || c.Retention.ConformanceRuns.D() != tc.want):
			t.Errorf("%q: retention.conformance_runs is %v, want %s", tc.written, c.Retention.ConformanceRuns, tc.want)
		}
	}
}
