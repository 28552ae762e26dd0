package ops_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/routerhq/router/internal/ops"
)

// Without an operator key (a loopback ops_listen, the default), a page in the
// operator's browser could DNS-rebind its own name to 127.0.0.1 and read the
// operator surface as its own origin: the browser then sends that name as
// Host. Such a request is refused 421 on every endpoint; a Host that is a
// loopback address or localhost, with any port, is served. With an operator
// key the key protects the surface, whatever the Host.
func TestOpsWithoutKeyServesOnlyLoopbackHosts(t *testing.T) {
	metrics := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, `router_cost_usd_total{owner="acme",provider="p",model="m"} 12.5`+"\n")
	})
	keyless := httptest.NewServer(ops.New(ops.Config{Metrics: metrics}, nil, nil, nil))
	defer keyless.Close()
	keyed := httptest.NewServer(ops.New(ops.Config{Key: "the-operator-key", Metrics: metrics}, nil, nil, nil))
	defer keyed.Close()
	get := func(srv *httptest.Server, path, host, key string) (int, string) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodGet, srv.URL+path, nil)
		req.Host = host
		if key != "" {
			req.Header.Set("Authorization", "Bearer "+key)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body)
	}
	for _, host := range []string{"attacker.example:9090", "attacker.example", "127.0.0.1.nip.io:9090", "localhost.attacker.example",
		"0.0.0.0:9090", "[::]:9090", "10.0.0.7:9090", "[::2]:9090", "[fe80::1%25lo]:9090"} {
		for _, path := range []string{"/metrics", "/dashboard", "/v1/providers", "/v1/conformance"} {
			status, body := get(keyless, path, host, "")
			if status != http.StatusMisdirectedRequest || !strings.Contains(body, "not-a-local-host") || !strings.Contains(body, "ops_key_env") ||
				strings.Contains(body, "router_cost") {
				t.Fatalf("GET %s with Host %s and no operator key: %d %s, want 421 not-a-local-host", path, host, status, body)
			}
		}
	}
	for _, host := range []string{"127.0.0.1:9090", "127.0.0.1", "127.8.9.10:1", "localhost:9090", "LOCALHOST", "localhost.", "[::1]:9090", "[::1]"} {
		if status, body := get(keyless, "/metrics", host, ""); status != http.StatusOK || !strings.Contains(body, "router_cost") {
			t.Fatalf("GET /metrics with Host %s: %d %s, want the metrics", host, status, body)
		}
	}
	if status, body := get(keyed, "/metrics", "router-ops.example:9090", "the-operator-key"); status != http.StatusOK {
		t.Fatalf("with the operator key, Host router-ops.example: %d %s, want the metrics", status, body)
	}
	if status, _ := get(keyed, "/metrics", "127.0.0.1", ""); status != http.StatusUnauthorized {
		t.Fatalf("without the operator key on a keyed listener, Host 127.0.0.1: %d, want 401", status)
	}
}
