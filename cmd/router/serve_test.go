package main

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/routerhq/router/internal/store"
	"github.com/routerhq/router/internal/testdb"
)

// `router serve` exposes the database counters on /metrics, moving with a job,
// and serves pprof only on --debug-listen.
func TestServeExposesDBCountersAndDebugListener(t *testing.T) {
	db := testdb.New(t, store.Options{})
	cfg := serveConfig(t, db, "serve-test", "serve-test-key", `log: {level: error}
providers:
  - name: scripted
    type: scripted
    script:
      - output: '{"category":"technical","priority":"high","summary":"Customer cannot log in since the reset link expired.","needs_human":false}'
routes:
  default:
    providers: [scripted]
`)
	ln, opsLn, debugLn := listen(t), listen(t), listen(t)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- serve(ctx, cfg, ln, opsLn, debugLn) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
	}()
	// The listeners are bound: requests wait in the accept queue until the
	// router serves.
	base, debug := "http://"+ln.Addr().String(), "http://"+debugLn.Addr().String()
	ops := "http://" + opsLn.Addr().String()
	client := &http.Client{Timeout: time.Minute}
	get := func(url string) (int, string) {
		t.Helper()
		resp, err := client.Get(url)
		if err != nil {
			t.Fatalf("GET %s: %v", url, err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	counters := func() map[string]float64 {
		t.Helper()
		code, body := get(ops + "/metrics") // the operator listener
		if code != http.StatusOK {
			t.Fatalf("/metrics: %d", code)
		}
		parser := expfmt.NewTextParser(model.UTF8Validation)
		fams, err := parser.TextToMetricFamilies(strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]float64{}
		for _, name := range []string{"router_db_round_trips_total", "router_db_statements_total", "router_db_transactions_total", "router_db_durable_commits_total"} {
			f, ok := fams[name]
			if !ok {
				t.Fatalf("/metrics lacks %s", name)
			}
			out[name] = f.GetMetric()[0].GetCounter().GetValue()
		}
		if f, ok := fams["router_db_batch_size"]; ok {
			for _, m := range f.GetMetric() {
				for _, l := range m.GetLabel() {
					if l.GetName() == "kind" {
						out["batches "+l.GetValue()] = float64(m.GetHistogram().GetSampleCount())
					}
				}
			}
		}
		return out
	}
	before := counters()
	resp, err := client.Do(triageJobRequest(base, "serve-test-key", "serve-test-1", 30))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode/100 != 2 || !strings.Contains(string(body), `"succeeded"`) {
		t.Fatalf("job: %d %s", resp.StatusCode, body)
	}
	after := counters()
	for _, name := range []string{"router_db_round_trips_total", "router_db_statements_total", "router_db_transactions_total",
		"router_db_durable_commits_total", "batches claim", "batches win"} {
		if after[name] <= before[name] {
			t.Errorf("%s did not move with a job: %v -> %v", name, before[name], after[name])
		}
	}
	if after["router_db_round_trips_total"] < after["router_db_transactions_total"] {
		t.Errorf("fewer round trips (%v) than transactions (%v)", after["router_db_round_trips_total"], after["router_db_transactions_total"])
	}

	if code, body := get(debug + "/debug/pprof/"); code != http.StatusOK || !strings.Contains(body, "goroutine") {
		t.Errorf("debug listener /debug/pprof/: %d %.200s", code, body)
	}
	if code, body := get(debug + "/debug/pprof/goroutine?debug=1"); code != http.StatusOK || !strings.Contains(body, "goroutine profile") {
		t.Errorf("debug listener goroutine profile: %d %.200s", code, body)
	}
	if code, _ := get(base + "/metrics"); code != http.StatusNotFound {
		t.Errorf("the tenant listener serves /metrics: %d", code)
	}
	if code, _ := get(base + "/debug/pprof/"); code == http.StatusOK {
		t.Errorf("the API listener serves pprof; it must only be on --debug-listen")
	}
}
