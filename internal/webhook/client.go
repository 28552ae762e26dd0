package webhook

import (
	"fmt"
	"net/http"
	"strings"
)

// maxResponseHeaderBytes bounds the headers of a webhook's answer: its status
// line and header fields (over HTTP/1 with those of any 1xx interim answers
// before it, and up to 4 KiB of the body read ahead with them). An answer
// whose headers exceed it is a failed try (errHeadersTooLarge).
// Config.MaxResponseBytes bounds only the body; net/http's own bound on
// headers, 10 MiB (HTTP/2's too), let one try against a receiver sending 10
// MiB of header lines allocate 30 MiB, and an owner has up to
// webhooks.max_inflight_per_owner tries in flight per replica.
const maxResponseHeaderBytes = 64 << 10

// errHeadersTooLarge is the failed try of an answer whose headers exceed
// maxResponseHeaderBytes: nothing of it is kept, not even its status.
var errHeadersTooLarge = fmt.Errorf("the webhook's response headers exceed %d KiB, more than a try reads", maxResponseHeaderBytes>>10)

// newHTTPClient is the default client of deliveries for a replica with
// workers deliveries in flight. It does not follow redirects (a 3xx is a
// failed try: the URL the owner configured is the one that gets signed
// events). Its transport keeps up to workers idle connections per host:
// net/http's default (2) made most deliveries to one busy endpoint open a new
// TCP and TLS connection, since each of the replica's workers needs one of
// its own. Idle connections to all endpoints together are kept up to
// max(workers, 100), the least recently used closed first; connections per
// host are not capped, since River's worker count bounds deliveries in
// flight. An answer's headers are read up to maxResponseHeaderBytes. Dial,
// TLS handshake and idle timeouts, HTTP/2 and the proxy from the environment
// are net/http's defaults; each try's own deadline is Config.Timeout.
func newHTTPClient(workers int) *http.Client {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConns = max(workers, t.MaxIdleConns)
	t.MaxIdleConnsPerHost = workers
	t.MaxResponseHeaderBytes = maxResponseHeaderBytes
	return &http.Client{
		Transport:     t,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

// headersTooLarge says whether err is net/http's refusal of an answer whose
// headers exceed the transport's MaxResponseHeaderBytes. net/http has no
// error value for it, so its words are matched: HTTP/1's ("net/http: server
// response headers exceeded 65536 bytes; aborted") and HTTP/2's (a stream
// error caused by "http2: response header list larger than advertised
// limit", for headers a little over the bound; far over it, net/http stops
// decoding them and ends the connection with a PROTOCOL_ERROR, which says
// nothing specific and is left as it is). A test of each protocol pins them.
func headersTooLarge(err error) bool {
	if err == nil {
		return false
	}
	msg := err.Error()
	return strings.Contains(msg, "server response headers exceeded") ||
		strings.Contains(msg, "response header list larger than advertised limit")
}
