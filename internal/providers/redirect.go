package providers

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
)

// maxRedirects is how many redirects an adapter's client follows, as
// net/http's default.
const maxRedirects = 10

// RedirectError is what an adapter's HTTP client returns when the provider
// answers a request with a redirect that net/http would follow by sending
// another method (301, 302 and 303 turn a POST into a GET without its body):
// the GET would fail, usually with a 405, for a reason no retry or caller can
// change. Typically base_url says http:// where the provider redirects to
// https://. Adapters classify it as KindMisconfigured.
type RedirectError struct {
	Status   int    // the redirect's status
	Location string // where it points (resolved)
	BaseURL  string // the base_url that would reach Location directly; "" when unknown
}

func (e *RedirectError) Error() string {
	s := fmt.Sprintf("the provider answered HTTP %d with a redirect to %s, which net/http would follow as a GET without the request's body", e.Status, e.Location)
	if e.BaseURL != "" {
		return s + ": set base_url to " + e.BaseURL
	}
	return s + ": set base_url to where the redirect points"
}

// keepMethodOnRedirect makes c (an adapter's own copy, see tracingClient)
// refuse a redirect that would change the request's method, with a
// *RedirectError naming the base_url to use. Redirects that keep the method
// and body (307, 308) are followed as before, through c's own CheckRedirect
// if it had one. baseURL is the adapter's base_url.
func keepMethodOnRedirect(c *http.Client, baseURL string) *http.Client {
	next := c.CheckRedirect
	c.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		if from := via[0]; req.Method != via[len(via)-1].Method {
			e := &RedirectError{Location: req.URL.Redacted(), BaseURL: suggestBaseURL(baseURL, from.URL, req.URL)}
			if req.Response != nil {
				e.Status = req.Response.StatusCode
			}
			return e
		}
		if next != nil {
			return next(req, via)
		}
		if len(via) >= maxRedirects {
			return fmt.Errorf("stopped after %d redirects", maxRedirects)
		}
		return nil
	}
	return c
}

// suggestBaseURL is the base_url whose requests go straight to to, where
// baseURL's went to from: to without the path the adapter appends to
// baseURL. "" when to does not end in that path.
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
	s := url.URL{Scheme: to.Scheme, Host: to.Host, Path: to.Path[:len(to.Path)-len(suffix)]}
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
	e := NewError(provider, KindMisconfigured, fmt.Sprintf(
		"the target's base_url answers with a redirect (HTTP %d) that would resend the request as a GET without its body: "+
			"an operator must set its base_url to where the redirect points (named in the router's log)", re.Status))
	e.StatusCode = re.Status
	e.ProviderMessage = re.Error()
	e.Err = err
	return e, true
}
