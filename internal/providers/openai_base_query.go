package providers

import (
	"net/http"
	"net/url"
	"strings"
)

// splitBaseQuery splits a base_url into the API root go-openai appends its
// paths to and the query to send with every request (Azure's
// /openai/v1?api-version=preview): left in the root, the query took the path
// (api-version=preview/chat/completions) and every call went to the root
// itself, a 404 blamed on the target's model.
func splitBaseQuery(baseURL string) (root, rawQuery string) {
	root, rawQuery, _ = strings.Cut(baseURL, "?")
	return root, rawQuery
}

// baseQueryTransport sends base_url's query (splitBaseQuery) with every
// request of the adapter's client: the chat completions, a lookup, a
// redirect followed to the same host. A parameter the request already has is
// left as the request has it.
type baseQueryTransport struct {
	next  http.RoundTripper
	raw   string     // base_url's query as written
	query url.Values // raw, parsed
}

// withBaseQuery wraps c's transport (c is the adapter's own copy) to send
// rawQuery with every request; c as it is when rawQuery is empty.
func withBaseQuery(c *http.Client, rawQuery string) *http.Client {
	if rawQuery == "" {
		return c
	}
	q, _ := url.ParseQuery(rawQuery) // what parses; url.Parse accepted the whole
	c.Transport = &baseQueryTransport{next: c.Transport, raw: rawQuery, query: q}
	return c
}

func (t *baseQueryTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	r := req.Clone(req.Context()) // a RoundTripper must not modify the caller's request
	if r.URL.RawQuery == "" {
		r.URL.RawQuery = t.raw
		return t.next.RoundTrip(r)
	}
	q := r.URL.Query()
	for k, vs := range t.query {
		if _, ok := q[k]; !ok {
			q[k] = vs
		}
	}
	r.URL.RawQuery = q.Encode()
	return t.next.RoundTrip(r)
}
