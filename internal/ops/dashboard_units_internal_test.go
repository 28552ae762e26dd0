package ops

import (
	"strings"
	"testing"
	"time"
)

// A spend too small for 4 decimals is shown to its first significant digits,
// never as $0.0000 (money spent read as none); larger sums keep 4 decimals.
func TestDashboardUSDShowsSmallSpend(t *testing.T) {
	for f, want := range map[float64]string{
		0:                "$0.0000",
		1.5:              "$1.5000",
		0.0123:           "$0.0123",
		300 * 0.15 / 1e6: "$0.000045",
		0.00004:          "$0.000040",
		1e-14:            "$0.0000000000",
	} {
		if got := usd(f); got != want {
			t.Errorf("usd(%g) = %q, want %q", f, got, want)
		}
	}
}

// The page's generated time is in UTC and says so, as the API's times and
// `router jobs list` are, whatever the process's local zone.
func TestDashboardGeneratedTimeIsUTCNamed(t *testing.T) {
	saved := time.Local
	time.Local = time.FixedZone("IST", 5*3600+1800)
	defer func() { time.Local = saved }()
	gen := time.Date(2026, 12, 5, 10, 0, 0, 0, time.UTC).In(time.Local)
	var b strings.Builder
	if err := dashboardTmpl.Execute(&b, &dashData{Generated: gen, Now: gen, Refresh: 5, Replica: "r1"}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "generated 10:00:00 UTC") {
		i := strings.Index(b.String(), "generated ")
		t.Errorf("generated at 10:00:00 UTC, the page says %q", b.String()[i:min(i+40, len(b.String()))])
	}
}
