package metrics

import (
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// httpBuckets are the request duration buckets, in seconds: a job's answer in
// tens of milliseconds, a long-poll (Prefer: wait) or a chat stream in
// minutes.
var httpBuckets = []float64{0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300}

// httpMetrics count the tenant API's requests (the RED metrics: rate, errors,
// duration), by the endpoint's route pattern.
type httpMetrics struct {
	requests *prometheus.CounterVec
	duration *prometheus.HistogramVec
}

func newHTTPMetrics() httpMetrics {
	return httpMetrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "router_http_requests_total",
			Help: "Requests the tenant API answered, by method, endpoint (its route pattern; \"/\" for a path no route takes) and status."},
			[]string{"method", "endpoint", "status"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "router_http_request_duration_seconds",
			Help:    "Time from a request's arrival to its handler's return (a long-poll's wait and a stream included), by method and endpoint.",
			Buckets: httpBuckets}, []string{"method", "endpoint"}),
	}
}

func (h httpMetrics) collectors() []prometheus.Collector {
	return []prometheus.Collector{h.requests, h.duration}
}

// RequestServed counts one answered request (api.RequestObserver).
func (m *Metrics) RequestServed(method, endpoint string, status int, d time.Duration) {
	method = knownMethod(method)
	if endpoint == "" {
		// No pattern: a path no route takes, as the HELP says (a CONNECT
		// request gets "" from ServeMux even with "/" registered).
		endpoint = "/"
	}
	m.http.requests.WithLabelValues(method, endpoint, strconv.Itoa(status)).Inc()
	m.http.duration.WithLabelValues(method, endpoint).Observe(d.Seconds())
}

// knownMethod bounds the method label: anyone can send any method.
func knownMethod(m string) string {
	switch m {
	case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete, http.MethodOptions:
		return m
	}
	return "other"
}
