package api_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/routerhq/router/internal/metrics"
)

// requestCounts is router_http_requests_total as "method endpoint status" ->
// count, and the number of observations of the duration histogram.
func requestCounts(t *testing.T, m *metrics.Metrics) (map[string]float64, uint64) {
	t.Helper()
	mfs, err := m.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	counts, observed := map[string]float64{}, uint64(0)
	for _, mf := range mfs {
		for _, s := range mf.GetMetric() {
			l := map[string]string{}
			for _, lp := range s.GetLabel() {
				l[lp.GetName()] = lp.GetValue()
			}
			switch mf.GetName() {
			case "router_http_requests_total":
				counts[l["method"]+" | "+l["endpoint"]+" | "+l["status"]] += s.GetCounter().GetValue()
			case "router_http_request_duration_seconds":
				observed += s.GetHistogram().GetSampleCount()
			}
		}
	}
	return counts, observed
}

// Every answered request is counted by method, endpoint (the route pattern,
// so ids do not multiply the series) and status, and timed: the rate, errors
// and duration an operator builds alerts on. A made-up method is "other", so
// no caller can add series at will.
func TestRequestsAreCountedByEndpointAndStatus(t *testing.T) {
	m := metrics.New(metrics.Options{NoProcessCollectors: true})
	b := setup(t, options{counters: m})
	rep := b.create(t, acmeKey, "http-metrics-1", triageBody("metrics"), "Prefer", "wait=10")
	if rep.status != http.StatusCreated {
		t.Fatalf("create: %d %s", rep.status, rep.raw)
	}
	b.create(t, acmeKey, "http-metrics-1", triageBody("metrics"), "Prefer", "wait=10") // a replay: 200
	id, _ := rep.body["id"].(string)
	b.do(t, http.MethodGet, "/v1/jobs/"+id, acmeKey, "")
	b.do(t, http.MethodGet, "/v1/jobs/"+id, "", "") // 401
	b.do(t, "BREW", "/v1/jobs", acmeKey, "")
	counts, observed := requestCounts(t, m)
	for key, want := range map[string]float64{
		"POST | POST /v1/jobs | 201":    1,
		"POST | POST /v1/jobs | 200":    1,
		"GET | GET /v1/jobs/{id} | 200": 1,
		"GET | GET /v1/jobs/{id} | 401": 1,
	} {
		if counts[key] != want {
			t.Errorf("router_http_requests_total{%s} = %v, want %v (all: %v)", key, counts[key], want, counts)
		}
	}
	other := 0.0
	for k, v := range counts {
		if strings.HasPrefix(k, "other | ") {
			other += v
		}
	}
	if other != 1 {
		t.Errorf("a made-up method counted %v times as \"other\", want once (all: %v)", other, counts)
	}
	if observed != 5 {
		t.Errorf("%d request durations observed, want 5", observed)
	}
}
