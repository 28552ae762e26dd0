package server

import (
	"testing"

	"github.com/routerhq/router/internal/metrics"
)

// lineWriter sends each write (one log record) to lines.
type lineWriter chan string

func (l lineWriter) Write(p []byte) (int, error) { l <- string(p); return len(p), nil }

// httpRequestCount is router_http_requests_total{method, endpoint, status}.
func httpRequestCount(t *testing.T, m *metrics.Metrics, method, endpoint, status string) float64 {
	t.Helper()
	mfs, err := m.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"method": method, "endpoint": endpoint, "status": status}
	n := 0.0
	for _, mf := range mfs {
		if mf.GetName() != "router_http_requests_total" {
			continue
		}
	next:
		for _, s := range mf.GetMetric() {
			for _, lp := range s.GetLabel() {
				if lp.GetValue() != want[lp.GetName()] {
					continue next
				}
			}
			n += s.GetCounter().GetValue()
		}
	}
	return n
}
