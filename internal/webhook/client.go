package webhook

import "net/http"

// newHTTPClient is the default client of deliveries for a replica with
// workers deliveries in flight. It does not follow redirects (a 3xx is a
// failed try: the URL the owner configured is the one that gets signed
// events). Its transport keeps up to workers idle connections per host:
// net/http's default (2) made most deliveries to one busy endpoint open a new
// TCP and TLS connection, since each of the replica's workers needs one of
// its own. Idle connections to all endpoints together are kept up to
// max(workers, 100), the least recently used closed first; connections per
// host are not capped, since River's worker count bounds deliveries in
// flight. Dial, TLS handshake and idle timeouts, HTTP/2 and the proxy from
// the environment are net/http's defaults; each try's own deadline is
// Config.Timeout.
func newHTTPClient(workers int) *http.Client {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConns = max(workers, t.MaxIdleConns)
	t.MaxIdleConnsPerHost = workers
	return &http.Client{
		Transport:     t,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}
