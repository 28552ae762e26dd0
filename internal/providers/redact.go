package providers

import (
	"net/url"
	"strings"

	"github.com/routerhq/router/internal/netredact"
)

// minSecret is the shortest string a redactor removes: shorter ones (a
// test's "k", a local server's "none") would mangle ordinary words; the same
// bound netredact.Query hides query values by.
const minSecret = netredact.MinSecret

// redacted is what a redactor writes in place of a secret.
const redacted = "[redacted]"

// redactor removes an adapter's secrets — its API key, the values of its
// base_url's query (a gateway's ?key=…, ?code=…) — from the text of the
// errors the adapter returns. A provider or a proxy in front of it may echo
// the request's headers or URL in an error body (a 400 that quotes the
// request, a debugging proxy's 502 page), and that text becomes the
// attempt's message: shown to the job's owner, stored, logged. Built once
// per adapter (newRedactor); the zero redactor removes nothing.
type redactor struct {
	secrets []string // longest first, so that a key containing another is removed whole
}

// newRedactor is the redactor of an adapter with apiKey and baseURL. A
// version parameter's value (Azure's api-version=2024-10-21) is no secret,
// and the provider's messages about it must stay readable.
func newRedactor(apiKey, baseURL string) redactor {
	// The same values as netredact.Query hides: both decide by minSecret and
	// versionParam.
	var r redactor
	r.add(apiKey)
	if _, rawQuery, ok := strings.Cut(baseURL, "?"); ok {
		for _, kv := range strings.FieldsFunc(rawQuery, func(c rune) bool { return c == '&' || c == ';' }) {
			k, v, _ := strings.Cut(kv, "=")
			if name, err := url.QueryUnescape(k); err == nil && netredact.VersionParam(name) {
				continue
			}
			r.add(v)
			if u, err := url.QueryUnescape(v); err == nil {
				r.add(u)
			}
		}
	}
	return r
}

func (r *redactor) add(s string) {
	s = strings.TrimSpace(s)
	if len(s) < minSecret {
		return
	}
	for i, have := range r.secrets {
		if have == s {
			return
		}
		if len(s) > len(have) {
			r.secrets = append(r.secrets[:i], append([]string{s}, r.secrets[i:]...)...)
			return
		}
	}
	r.secrets = append(r.secrets, s)
}

// error removes the secrets from the texts of the *Errors in err's chain
// that are shown or logged (Message, ProviderMessage, Code, Param,
// ProviderRequestID), in place, and
// returns err.
func (r redactor) error(err error) error {
	if len(r.secrets) == 0 {
		return err
	}
	// Every *Error in the chain: one may wrap another (a billed failure's
	// cause), and both are read.
	// An *Error may wrap itself through its cause: each is done once.
	seen := map[*Error]bool{}
	for e, ok := AsError(err); ok && !seen[e]; e, ok = AsError(e.Err) {
		seen[e] = true
		e.Message = r.text(e.Message)
		e.ProviderMessage = r.text(e.ProviderMessage)
		e.Code = r.text(e.Code)
		e.Param = r.text(e.Param)
		e.ProviderRequestID = r.text(e.ProviderRequestID)
	}
	return err
}

// text is s without the secrets. A message is cut to a bound (truncate),
// which may have cut a secret too: the start of one left just before the
// cut's "…" is removed as well, down to 4 bytes.
func (r redactor) text(s string) string {
	for _, secret := range r.secrets {
		s = strings.ReplaceAll(s, secret, redacted)
	}
	body, ellipsis := strings.CutSuffix(s, "…")
	for _, secret := range r.secrets {
		if !ellipsis {
			break
		}
		for n := len(secret) - 1; n >= 4; n-- {
			if strings.HasSuffix(body, secret[:n]) {
				body = body[:len(body)-n] + redacted
				break
			}
		}
	}
	if ellipsis {
		return body + "…"
	}
	return body
}

// redactedURL is raw (a base_url, a redirect's address) for a message or a
// log: without user information, and with the value of each query
// parameter that may be a secret (a gateway's ?key=…: minSecret bytes or
// more, and not a version, versionParam) replaced by "…". A placeholder
// when raw does not parse.
func redactedURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(a URL that does not parse)"
	}
	return netredact.URL(u)
}
