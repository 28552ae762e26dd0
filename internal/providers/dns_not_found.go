package providers

import "net"

// hostNotFound reports a DNS answer that the target's host name does not
// exist (NXDOMAIN, "no such host"): the target's base_url is wrong (a service
// renamed or retired), not the network busy, so it is misconfigured — failed
// over at once, counted against the breaker, and a real conformance failure.
// A lookup that timed out, a resolver that failed (SERVFAIL, "server
// misbehaving") or any answer flagged temporary stays connection_refused,
// retried: it says nothing of the name.
func hostNotFound(e *net.DNSError) bool {
	return e.IsNotFound && !e.IsTemporary && !e.IsTimeout
}
