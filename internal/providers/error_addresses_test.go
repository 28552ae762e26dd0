package providers

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/url"
	"strings"
	"syscall"
	"testing"

	"github.com/routerhq/router/internal/netredact"
)

// An attempt's error is shown to the tenant (the job resource, a chat
// error): it says what failed without the provider's URL or address, which
// belong to the operator (a self-hosted model's internal host).
func TestTransportErrorsLeaveOutTheProvidersAddress(t *testing.T) {
	addr := &net.TCPAddr{IP: net.IPv4(10, 0, 3, 7), Port: 8443}
	for _, err := range []error{
		&url.Error{Op: "Post", URL: "https://10.0.3.7:8443/v1/chat/completions",
			Err: &net.OpError{Op: "dial", Net: "tcp", Addr: addr, Err: syscall.EHOSTUNREACH}},
		&net.OpError{Op: "read", Net: "tcp", Addr: addr, Err: errors.New("some network failure")},
		&net.DNSError{Err: "no such host", Name: "llm.internal.corp", Server: "10.0.0.2:53", IsNotFound: true},
	} {
		e := classifyTransport("p", err)
		if strings.Contains(e.Message, "10.0.") || strings.Contains(e.Message, "internal.corp") || strings.Contains(e.Message, "8443") {
			t.Errorf("%v: the attempt's message names the provider's address: %q", err, e.Message)
		}
		if e.Kind == KindUnknownProvider {
			t.Errorf("%v: kind %s, want a network kind", err, e.Kind)
		}
	}
}

// Each network error keeps what failed without where.
func TestWithoutAddresses(t *testing.T) {
	addr := closedAddr(t)
	_, err := http.Get("http://" + addr + "/")
	if err == nil {
		t.Fatalf("GET %s answered: the closed port was taken again", addr)
	}
	msg := netredact.ErrorText(err)
	if strings.Contains(msg, "127.0.0.1") || !strings.Contains(msg, "connection refused") {
		t.Fatalf("%q: want the cause without the address", msg)
	}
}

// A body or stream broken off by the network keeps the provider's address
// ("read tcp 10.0.3.7:443->…") out of the attempt's message too, whichever
// adapter and whatever status. Found by review.
func TestBrokenBodyMessagesLeaveOutTheProvidersAddress(t *testing.T) {
	sse := "data: {\"id\":\"x\",\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"hi\"}}]}\n\n"
	for name, c := range map[string]struct {
		h      http.HandlerFunc
		stream bool
		ant    bool
	}{
		"openai 200 body":    {cutBody(200, "application/json", nil, `{"id":"x","choi`), false, false},
		"openai stream":      {cutBody(200, "text/event-stream", nil, sse), true, false},
		"openai 503 body":    {cutBody(503, "application/json", nil, `{"error":{"mess`), false, false},
		"anthropic 200 body": {cutBody(200, "application/json", nil, `{"id":"msg_1","ty`), false, true},
		"anthropic stream":   {cutBody(200, "text/event-stream", nil, "event: ping\ndata: {\"type\":\"ping\"}\n\n"), true, true},
		"anthropic 529 body": {cutBody(529, "application/json", nil, `{"type":"error","err`), false, true},
	} {
		srv := newFakeServer(t, c.h)
		host := strings.TrimPrefix(srv.URL, "http://")
		host = host[:strings.LastIndex(host, ":")]
		var p Provider = newTestAdapter(t, srv.URL+"/v1", func(cfg *OpenAIConfig) { cfg.Stream = c.stream })
		if c.ant {
			p = newAnthropicAdapter(t, srv.URL, func(cfg *AnthropicConfig) { cfg.Stream = c.stream })
		}
		_, err := p.Complete(context.Background(), testRequest())
		e := mustError(t, err)
		if strings.Contains(e.Message, host) || !strings.Contains(e.Message, "connection reset") {
			t.Errorf("%s: %s: want the cause without the provider's address: %q", name, e.Kind, e.Message)
		}
	}
}
