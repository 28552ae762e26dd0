package providers

import (
	"net/http"
	"testing"
)

// Issue 11: an adapter built without a client keeps enough idle connections to
// a provider for concurrent calls to reuse them (net/http's default keeps 2).
func TestAdapterTransportKeepsIdleConnections(t *testing.T) {
	p, err := NewOpenAI(OpenAIConfig{Name: "p", BaseURL: "http://127.0.0.1:1/v1"})
	if err != nil {
		t.Fatal(err)
	}
	tr := p.http.Transport.(*traceTransport).next.(*http.Transport)
	if tr.MaxIdleConnsPerHost != DefaultIdleConnsPerHost {
		t.Fatalf("idle connections per host = %d, want %d", tr.MaxIdleConnsPerHost, DefaultIdleConnsPerHost)
	}
	q, err := NewOpenAI(OpenAIConfig{Name: "q", BaseURL: "http://127.0.0.1:1/v1", MaxIdleConns: 17})
	if err != nil {
		t.Fatal(err)
	}
	if got := q.http.Transport.(*traceTransport).next.(*http.Transport).MaxIdleConnsPerHost; got != 17 {
		t.Fatalf("configured idle connections = %d, want 17", got)
	}
}
