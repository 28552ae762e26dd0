package providers

import (
	"net"
	"net/url"
	"strings"
	"testing"
)

// A host name that does not exist is the target's base_url, wrong: it is
// misconfigured (the router's configuration, failed over, not retried), and
// its message says what to check. A lookup that failed for the moment — timed
// out, a resolver that answered SERVFAIL ("server misbehaving"), an answer
// flagged temporary — says nothing of the name and stays retried.
func TestClassifyDNSFailures(t *testing.T) {
	lookup := func(e *net.DNSError) error {
		return &url.Error{Op: "Post", URL: "http://vllm-retired.internal/v1/chat/completions",
			Err: &net.OpError{Op: "dial", Net: "tcp", Err: e}}
	}
	for _, r := range []struct {
		name   string
		err    *net.DNSError
		kind   Kind
		fault  Fault
		action Action
		msg    string
	}{
		{"no such host", &net.DNSError{Err: "no such host", Name: "vllm-retired.internal", IsNotFound: true},
			KindMisconfigured, FaultRouter, ActionFailover, "the host name does not resolve: check base_url (DNS lookup failed: no such host)"},
		{"not found, but temporary", &net.DNSError{Err: "no such host", Name: "vllm-retired.internal", IsNotFound: true, IsTemporary: true},
			KindConnRefused, FaultNetwork, ActionRetry, "DNS lookup failed: no such host"},
		{"server misbehaving", &net.DNSError{Err: "server misbehaving", Name: "vllm-retired.internal", IsTemporary: true},
			KindConnRefused, FaultNetwork, ActionRetry, "DNS lookup failed: server misbehaving"},
		{"resolver gave no answer", &net.DNSError{Err: "server misbehaving", Name: "vllm-retired.internal"},
			KindConnRefused, FaultNetwork, ActionRetry, "DNS lookup failed: server misbehaving"},
		{"lookup timed out", &net.DNSError{Err: "i/o timeout", Name: "vllm-retired.internal", IsTimeout: true, IsTemporary: true},
			KindTimeout, FaultNetwork, ActionFailover, "deadline passed"},
	} {
		e := Classify("p", lookup(r.err))
		if e.Kind != r.kind || e.Fault != r.fault || e.Action != r.action || !strings.HasPrefix(e.Message, r.msg) {
			t.Errorf("%s: %s/%s/%s %q, want %s/%s/%s %q", r.name, e.Kind, e.Fault, e.Action, e.Message, r.kind, r.fault, r.action, r.msg)
		}
		if notFound := r.kind == KindMisconfigured; (e.Code == CodeHostNotFound) != notFound {
			t.Errorf("%s: code %q; want %q only for a name that does not exist (a conformance run reads it as inconclusive)", r.name, e.Code, CodeHostNotFound)
		}
		if strings.Contains(e.Message, "vllm-retired") {
			t.Errorf("%s: the message names the provider's host: %q", r.name, e.Message)
		}
	}
}
