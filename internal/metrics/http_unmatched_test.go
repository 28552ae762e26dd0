package metrics_test

import (
	"testing"
	"time"

	"github.com/routerhq/router/internal/metrics"
)

// A request no route pattern took (ServeMux gives a CONNECT request the
// pattern "" even with "/" registered) is counted under endpoint "/", as
// router_http_requests_total's HELP and docs/operations.md say. Found by
// review.
func TestRequestWithoutPatternCountsUnderSlash(t *testing.T) {
	m := metrics.New(metrics.Options{NoProcessCollectors: true})
	m.RequestServed("CONNECT", "", 405, time.Millisecond)
	fams := scrape(t, m.Handler())
	if got := value(t, fams, "router_http_requests_total", map[string]string{"method": "other", "endpoint": "/", "status": "405"}); got != 1 {
		t.Errorf("requests under endpoint=/ = %v, want 1", got)
	}
	if got := value(t, fams, "router_http_request_duration_seconds", map[string]string{"method": "other", "endpoint": "/"}); got != 1 {
		t.Errorf("durations under endpoint=/ = %v, want 1", got)
	}
	for _, f := range []string{"router_http_requests_total", "router_http_request_duration_seconds"} {
		for _, s := range fams[f].GetMetric() {
			for _, l := range s.GetLabel() {
				if l.GetName() == "endpoint" && l.GetValue() != "/" {
					t.Errorf("%s: series with endpoint=%q", f, l.GetValue())
				}
			}
		}
	}
}
