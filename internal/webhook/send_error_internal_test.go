package webhook

import (
	"context"
	"errors"
	"net"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/routerhq/router/internal/testdb"
)

// A try that fails before any answer is recorded (and shown to the tenant by
// GET /v1/jobs/{id}/events) and logged by River at info on every retry for
// 24 h: its error must not quote the webhook URL, whose path or query is
// often the endpoint's credential (Slack-style hook URLs), nor the addresses
// it resolved to. It keeps the cause, in words and for errors.Is.
func TestSendErrorLeavesOutTheURLAndAddresses(t *testing.T) {
	const secretPath = "/services/T000/B000/s3cr3tT0ken?token=s3cr3tQuery"
	const id, secret = "01a2380f-36ed-703b-b582-c30406978704", "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"

	addr := testdb.ClosedAddr(t) // nothing listens there: the connection is refused
	_, err := NewWorker(nil, Config{Timeout: time.Minute}).send(context.Background(), newTryClock(time.Time{}, time.Now), "http://"+addr+secretPath, signingKeys{secret: secret}, id, id+".1.0123abcd", []byte(`{}`))
	if err == nil {
		t.Fatal("a try to a closed port succeeded")
	}
	_, port, _ := net.SplitHostPort(addr)
	if msg := err.Error(); strings.Contains(msg, "s3cr3t") || strings.Contains(msg, "127.0.0.1") || strings.Contains(msg, port) ||
		!strings.Contains(msg, "connection refused") {
		t.Fatalf("refused connection: error %q, want the cause without the URL, its token or the address", msg)
	}
	if !errors.Is(err, syscall.ECONNREFUSED) {
		t.Errorf("refused connection: errors.Is(%v, ECONNREFUSED) is false: the cause is lost", err)
	}

	// A name that does not resolve, as the dialer reports it.
	lookupFails := &http.Transport{DialContext: func(context.Context, string, string) (net.Conn, error) {
		return nil, &net.OpError{Op: "dial", Net: "tcp", Err: &net.DNSError{Err: "no such host", Name: "hooks.s3cr3t.example", Server: "10.0.0.53:53", IsNotFound: true}}
	}}
	w := NewWorker(nil, Config{Timeout: time.Minute, Client: &http.Client{Transport: lookupFails}})
	_, err = w.send(context.Background(), newTryClock(time.Time{}, time.Now), "https://hooks.s3cr3t.example"+secretPath, signingKeys{secret: secret}, id, id+".1.0123abcd", []byte(`{}`))
	if err == nil {
		t.Fatal("a try to a name that does not resolve succeeded")
	}
	if msg := err.Error(); strings.Contains(msg, "s3cr3t") || strings.Contains(msg, "10.0.0.53") || msg != "send: dial: lookup: no such host" {
		t.Fatalf("failed lookup: error %q, want %q", msg, "send: dial: lookup: no such host")
	}
	var dnsErr *net.DNSError
	if !errors.As(err, &dnsErr) || !dnsErr.IsNotFound {
		t.Errorf("failed lookup: the *net.DNSError is lost from %v", err)
	}
}
