package api

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/routerhq/router/internal/metrics"
)

// A panic after a stream's SSE headers went out is answered as the stream's
// internal error event, which SDKs raise as an API error — not as a
// problem+json body glued to the events, which they would read as a broken
// event — with no [DONE], and counted as a 500. Found by review.
func TestPanicInAStreamEndsItWithAnInternalErrorEvent(t *testing.T) {
	m := metrics.New(metrics.Options{NoProcessCollectors: true})
	s := New(Config{}, Deps{Counters: m})
	s.WrapRoutes(func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			writeStreamHeaders(w)
			fmt.Fprint(w, ": waiting for a valid answer\n\n")
			panic("injected by the test")
		})
	})
	srv := httptest.NewServer(s)
	defer srv.Close()
	resp, err := http.Post(srv.URL+"/v1/chat/completions", "application/json", strings.NewReader(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	body := string(raw)
	if resp.StatusCode != http.StatusOK || !strings.HasSuffix(body, "\n\n") || strings.Contains(body, "[DONE]") ||
		!strings.Contains(body, "\ndata: {\"error\":{") || !strings.Contains(body, `"code":"internal"`) || strings.Contains(body, `"title"`) {
		t.Fatalf("%d %q, want the stream ended by an internal error event", resp.StatusCode, body)
	}
	srv.Close() // every request served: counted
	mfs, err := m.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	var statuses []string
	for _, mf := range mfs {
		if mf.GetName() != "router_http_requests_total" {
			continue
		}
		for _, s := range mf.GetMetric() {
			for _, lp := range s.GetLabel() {
				if lp.GetName() == "status" {
					statuses = append(statuses, lp.GetValue())
				}
			}
		}
	}
	if len(statuses) != 1 || statuses[0] != "500" {
		t.Fatalf("counted with statuses %v, want [500]", statuses)
	}
}

// A 503 no-eligible-provider tells the caller to retry after Retry-After
// only when something says when; a refusal that does not clear by itself
// (conformance missing) says the operator must act. Found by review.
func TestNoEligibleAdviceMatchesRetryAfter(t *testing.T) {
	open := `[{"provider":"p","eligible":false,"reason":"circuit breaker open after 5 consecutive failures; probing again in 12s"}]`
	gate := `[{"provider":"p","eligible":false,"reason":"conformance results missing"}]`
	if got := noEligibleAdvice([]byte(open)); !strings.Contains(got, "retry after Retry-After") {
		t.Errorf("open breaker: %q", got)
	}
	if got := noEligibleAdvice([]byte(gate)); strings.Contains(got, "Retry-After") || !strings.Contains(got, "operator") {
		t.Errorf("conformance missing: %q", got)
	}
}

// Retry-After of a 503 no_eligible_provider: the first open breaker's time
// left, less the decisions' age, rounded up, within [1, 60]; 1 s for a
// half-open breaker whose probes are taken, 2 s for a conformance read that
// failed, none (0) when nothing says when.
func TestNoEligibleRetryAfter(t *testing.T) {
	open := func(left string) string {
		return `{"provider":"p","eligible":false,"reason":"circuit breaker open after 5 consecutive failures; probing again in ` + left + `"}`
	}
	for _, tc := range []struct {
		routing string
		elapsed time.Duration
		want    int
	}{
		{`[` + open("25s") + `,` + open("12s") + `]`, 0, 12},
		{`[` + open("25s") + `]`, 10*time.Second + time.Millisecond, 15},
		{`[` + open("25s") + `]`, time.Minute, 1},
		{`[` + open("0s") + `]`, 0, 1},
		{`[` + open("4m0s") + `]`, 0, 60},
		{`[{"provider":"p","eligible":false,"reason":"circuit breaker open (a half-open probe failed); probing again in 7s"}]`, 0, 7},
		{`[{"provider":"p","eligible":false,"reason":"circuit breaker half-open: its one probe is in flight"}]`, 0, 1},
		// nothing that clears by itself: no Retry-After (0), or the SDKs
		// would wait a minute to fail the same way
		{`[{"provider":"p","eligible":false,"reason":"conformance results missing"}]`, 0, 0},
		{`not json`, 0, 0},
		// a conformance read that timed out clears by itself: shortly
		{`[{"provider":"p","eligible":false,"reason":"cannot read conformance results for triage@2 (context deadline exceeded)"}]`, 0, 2},
	} {
		if got := noEligibleRetryAfter([]byte(tc.routing), tc.elapsed); got != tc.want {
			t.Errorf("%s, %v ago: %d, want %d", tc.routing, tc.elapsed, got, tc.want)
		}
	}
}
