package providers

import "net"

// hostNotFound reports a DNS answer that the target's host name does not
// exist (NXDOMAIN, "no such host"): the target's base_url is wrong (a service
// renamed or retired), not the network busy, so it is misconfigured — failed
// over at once, counted against the breaker, and a real conformance failure.
// A lookup that timed out, a resolver that failed (SERVFAIL, "server
// misbehaving") or any answer flagged temporary stays connection_refused,
// retried: it says nothing of the name.
//
// Its error carries Code CodeHostNotFound: a conformance run reads it as
// inconclusive, not as a failure of the target (conformance.transientError).
func hostNotFound(e *net.DNSError) bool {
	return e.IsNotFound && !e.IsTemporary && !e.IsTimeout
}

// CodeHostNotFound is the Code of the error of a call whose host name did
// not resolve (hostNotFound).
const CodeHostNotFound = "host_not_found"
