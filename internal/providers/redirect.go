package providers

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/routerhq/router/internal/netredact"
)

// maxRedirects is how many redirects an adapter's client follows, as
// net/http's default.
const maxRedirects = 10

// RedirectError is what an adapter's HTTP client returns when the provider
// answers a request with a redirect it does not follow:
//
//   - one that net/http would follow by sending another method (301, 302 and
//     303 turn a POST into a GET without its body): the GET would fail,
//     usually with a 405, for a reason no retry or caller can change.
//     Typically base_url says http:// where the provider redirects to
//     https://.
//   - one to another host (OtherHost): the request would carry the target's
//     credentials there. net/http drops Authorization on such a redirect
//     (both adapters send the key in it), but not other headers (a
//     gateway's key in a header of its own), and the host the operator
//     configured is the only one trusted with the request.
//   - one from https to http (Insecure), on any host: net/http keeps
//     Authorization for the same host, so the key and the prompt would go
//     out unencrypted (curl's CVE-2022-27776).
//   - one to another port of the same host (OtherPort), but for an http
//     base_url upgraded to https on its default port: another port may be
//     another server, which net/http would send Authorization to as well.
//   - one more after maxRedirects in a row (Loop): a redirect loop.
//
// Adapters classify it as KindMisconfigured.
type RedirectError struct {
	Status    int    // the redirect's status
	Location  string // where it points (resolved)
	BaseURL   string // the base_url that would reach Location directly; "" when unknown
	OtherHost bool   // Location is on another host than base_url
	// From is the address redirected (without its query values, as
	// Location and BaseURL), named with Location when the redirect is
	// Insecure or to OtherPort.
	From      string
	Insecure  bool // from https to http: the key and the prompt would go unencrypted
	OtherPort bool // to another port of base_url's host (not an upgrade to https on 443)
	// Loop: the provider redirected more than maxRedirects times (a
	// redirect loop: a proxy sending http to https and back, a path that
	// redirects to itself); Location is the last redirect's.
	Loop bool
}

func (e *RedirectError) Error() string {
	if e.Loop {
		return fmt.Sprintf("the provider redirected the request more than %d times, the last with HTTP %d to %s: base_url leads to a redirect loop", maxRedirects, e.Status, e.Location)
	}
	if e.Insecure {
		return fmt.Sprintf("the provider answered HTTP %d with a redirect from %s to %s, from https to plain http, which is not followed: "+
			"the request would carry the target's API key and the prompt unencrypted; keep base_url on https and fix the server or proxy that redirects to http "+
			"(or, if the provider really is served only over plain http, set base_url to its http address yourself)", e.Status, e.From, e.Location)
	}
	if e.OtherPort {
		s := fmt.Sprintf("the provider answered HTTP %d with a redirect from %s to %s, another port than base_url's, which is not followed: "+
			"the request carries the target's API key, and another port may be another server", e.Status, e.From, e.Location)
		if e.BaseURL != "" {
			return s + "; if that port is the provider's, set base_url to " + e.BaseURL + queryNote(e.BaseURL)
		}
		return s + "; if that port is the provider's, set base_url to where the redirect points"
	}
	s := fmt.Sprintf("the provider answered HTTP %d with a redirect to %s, which net/http would follow as a GET without the request's body", e.Status, e.Location)
	if e.OtherHost {
		s = fmt.Sprintf("the provider answered HTTP %d with a redirect to %s, on another host than base_url's, which is not followed: the request carries the target's API key", e.Status, e.Location)
	}
	if e.BaseURL != "" {
		return s + ": set base_url to " + e.BaseURL + queryNote(e.BaseURL)
	}
	return s + ": set base_url to where the redirect points"
}

// guardRedirects makes c (an adapter's own copy, see tracingClient) refuse a
// redirect that would change the request's method, that points to another
// host than base_url's, from https to http, or to another port of the same
// host (but an upgrade from http to https on its default port), with a
// *RedirectError naming the base_url to use. Other redirects, which keep the
// method and body (307, 308), are followed as before, through c's own
// CheckRedirect if it had one. baseURL is the adapter's base_url, with its
// query.
func guardRedirects(c *http.Client, baseURL string) *http.Client {
	next := c.CheckRedirect
	c.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		from, last := via[0], via[len(via)-1]
		otherHost := !strings.EqualFold(req.URL.Hostname(), from.URL.Hostname())
		insecure := !otherHost && req.URL.Scheme == "http" && slices.ContainsFunc(via, func(r *http.Request) bool { return r.URL.Scheme == "https" })
		otherPort := !otherHost && !insecure && !samePort(from.URL, req.URL)
		if otherHost || insecure || otherPort || req.Method != last.Method {
			e := &RedirectError{Location: netredact.URL(req.URL), BaseURL: suggestBaseURL(baseURL, from.URL, req.URL), OtherHost: otherHost,
				From: netredact.URL(last.URL), Insecure: insecure, OtherPort: otherPort}
			if req.Response != nil {
				e.Status = req.Response.StatusCode
			}
			return e
		}
		if next != nil {
			return next(req, via)
		}
		if len(via) >= maxRedirects {
			e := &RedirectError{Location: netredact.URL(req.URL), Loop: true}
			if req.Response != nil {
				e.Status = req.Response.StatusCode
			}
			return e
		}
		return nil
	}
	return c
}

// queryNote is what a suggested base_url needs said when its query's values
// are hidden (netredact.Query): they are base_url's own, to be kept.
func queryNote(suggested string) string {
	if strings.Contains(suggested, "=…") {
		return " (with base_url's query values where it shows …)"
	}
	return ""
}

// samePort reports whether a redirect from from to to stays on from's port:
// the same scheme and port (a default port written or not), or an upgrade
// from http to https on https's default port (http://h:8080 → https://h).
func samePort(from, to *url.URL) bool {
	if from.Scheme == "http" && to.Scheme == "https" {
		return effectivePort(to) == "443"
	}
	return from.Scheme == to.Scheme && effectivePort(from) == effectivePort(to)
}

// effectivePort is u's port, or its scheme's default.
func effectivePort(u *url.URL) string {
	if p := u.Port(); p != "" {
		return p
	}
	if u.Scheme == "https" {
		return "443"
	}
	return "80"
}

// suggestBaseURL is the base_url whose requests go straight to to, where
// baseURL's went to from: to without the path the adapter appends to
// baseURL, with baseURL's own query (Azure's ?api-version=…), which the
// adapters send with every request (baseQueryTransport), its values but a
// version's shown as "…" (netredact.Query: a gateway's key may be one, and the
// suggestion is logged). "" when to does not end in that path.
func suggestBaseURL(baseURL string, from, to *url.URL) string {
	b, err := url.Parse(baseURL)
	if err != nil {
		return ""
	}
	basePath := strings.TrimRight(b.Path, "/")
	if !strings.HasPrefix(from.Path, basePath) {
		return ""
	}
	suffix := from.Path[len(basePath):]
	if !strings.HasSuffix(to.Path, suffix) {
		return ""
	}
	s := url.URL{Scheme: to.Scheme, Host: to.Host, Path: to.Path[:len(to.Path)-len(suffix)], RawQuery: netredact.Query(b.RawQuery)}
	return s.String()
}

// redirectRefused classifies a *RedirectError in err's chain: the target's
// configuration, failed over. The Location, which may be a self-hosted
// provider's internal address, is kept out of Message (shown to tenants) and
// in ProviderMessage, for the router's log.
func redirectRefused(provider string, err error) (*Error, bool) {
	var re *RedirectError
	if !errors.As(err, &re) {
		return nil, false
	}
	why := "that would resend the request as a GET without its body"
	switch {
	case re.OtherHost:
		why = "to another host, which is not followed (the request carries the target's API key)"
	case re.Insecure:
		why = "from https to plain http, which is not followed (the request would carry the target's API key and the prompt unencrypted)"
	case re.OtherPort:
		why = "to another port, which is not followed (the request carries the target's API key)"
	}
	msg := fmt.Sprintf("the target's base_url answers with a redirect (HTTP %d) %s: "+
		"an operator must set its base_url to where the redirect points (named in the router's log)", re.Status, why)
	if re.Insecure {
		msg = fmt.Sprintf("the target's base_url answers with a redirect (HTTP %d) %s: "+
			"an operator must fix the server or proxy that redirects to http (named in the router's log)", re.Status, why)
	}
	if re.Loop {
		msg = fmt.Sprintf("the target's base_url redirects more than %d times (the last with HTTP %d): "+
			"a redirect loop, which an operator must fix at its base_url (the last redirect's address is in the router's log)", maxRedirects, re.Status)
	}
	e := NewError(provider, KindMisconfigured, msg)
	e.StatusCode = re.Status
	e.ProviderMessage = re.Error()
	e.Err = err
	return e, true
}

// unfollowedRedirect is the error of a 3xx response to an answer's request
// that the client does not follow (isRedirect: a 300, a 304, a 305, a 307
// with no Location): not the provider's answer, though go-openai and the
// Anthropic SDK fail only from 400 and decoded it as one (a 300 with a
// completion body was the answer; an empty one a reset before any
// response, retried on the same target). Like an unlisted 4xx it says
// nothing against the request: the target's base_url (a proxy, a redirect
// in front of the API), failed over. Not received, as an error status is
// not. nil for any other response, and for a call that expects no answer
// (answerAny).
func unfollowedRedirect(provider string, want answerType, resp *http.Response) *Error {
	if want == answerAny || resp.StatusCode < 300 || resp.StatusCode > 399 || isRedirect(resp) {
		return nil
	}
	e := NewError(provider, KindMisconfigured, fmt.Sprintf(
		"HTTP %d %s from the target, which the router does not follow: an operator must check the target's base_url (a proxy or a redirect in front of the API?)",
		resp.StatusCode, http.StatusText(resp.StatusCode)))
	e.StatusCode = resp.StatusCode
	if loc := resp.Header.Get("Location"); loc != "" {
		// Maybe a self-hosted provider's internal address: the log's.
		e.ProviderMessage = "Location: " + truncate(redactedLocation(loc))
	}
	return e
}

// redactedLocation is a Location header's value without user information
// or query values in it (netredact.URL).
func redactedLocation(loc string) string {
	if u, err := url.Parse(loc); err == nil {
		return netredact.URL(u)
	}
	return loc
}
