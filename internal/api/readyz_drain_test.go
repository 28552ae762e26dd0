package api_test

import (
	"net/http"
	"strings"
	"testing"
)

// /readyz answers 503 from the moment the replica starts draining (SIGTERM),
// so a load balancer polling readiness sends new requests to other replicas;
// /healthz still answers 200 (the process serves what it holds).
func TestReadyzIsNotReadyWhileDraining(t *testing.T) {
	b := setup(t, options{})
	if r := b.do(t, http.MethodGet, "/readyz", "", ""); r.status != http.StatusOK {
		t.Fatalf("before draining: /readyz %d %s", r.status, r.raw)
	}
	b.api.Drain()
	r := b.do(t, http.MethodGet, "/readyz", "", "")
	if r.status != http.StatusServiceUnavailable || !strings.Contains(string(r.raw), "shutting down") {
		t.Fatalf("while draining: /readyz %d %s; want 503 saying the replica is shutting down", r.status, r.raw)
	}
	if r := b.do(t, http.MethodGet, "/healthz", "", ""); r.status != http.StatusOK {
		t.Fatalf("while draining: /healthz %d, want 200", r.status)
	}
}
