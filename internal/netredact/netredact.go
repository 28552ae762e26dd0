// Package netredact words network errors without the URLs and addresses
// they quote, and shows URLs without what may be a secret in them (user
// information, a gateway's key in the query; for a webhook URL, its path past
// the first segment: WebhookURL, and in a text that quotes it: WebhookText)
// — for internal/config, internal/providers and internal/webhook
// alike. It owns only that wording; it must not decide
// what an error means (internal/providers and internal/webhook classify their
// own).
package netredact

import (
	"errors"
	"net"
	"net/url"
)

// ErrorText is err's message without a URL or network address: "dial:
// connect: connection refused", "lookup: no such host". net/http's *url.Error
// quotes the whole URL (a self-hosted provider's internal address, a webhook
// URL whose path is its credential) and a *net.OpError the addresses dialled;
// the text is shown to tenants and logged. What failed, and why, stays.
func ErrorText(err error) string {
	var urlErr *url.Error
	if errors.As(err, &urlErr) && urlErr.Err != nil {
		err = urlErr.Err // `Post "https://10.0.0.7/v1/…": …` without the URL
	}
	var opErr *net.OpError
	if errors.As(err, &opErr) && opErr.Err != nil {
		return opErr.Op + ": " + ErrorText(opErr.Err) // "dial tcp 10.0.0.7:443: …" without the addresses
	}
	var dnsErr *net.DNSError
	if errors.As(err, &dnsErr) {
		return "lookup: " + dnsErr.Err // without the name looked up and the server asked
	}
	return err.Error()
}
