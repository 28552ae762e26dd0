package api_test

import (
	"io"
	"net/http"
	"strings"
	"testing"
)

// authAnswer is an answer to a request sent with the given Authorization
// headers, each its own header line.
type authAnswer struct {
	status int
	header http.Header
	body   string
}

func sendAuth(t *testing.T, b *bundle, method, path, body string, auth ...string) authAnswer {
	t.Helper()
	req, err := http.NewRequest(method, b.srv.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range auth {
		req.Header.Add("Authorization", h)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Idempotency-Key", "auth-header")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return authAnswer{status: resp.StatusCode, header: resp.Header, body: string(raw)}
}

const chatHi = `{"model":"default","messages":[{"role":"user","content":"hi"}]}`

// Two Authorization headers are refused, whichever comes first: a proxy or an
// audit log may take the last where the router took the first, letting in or
// logging one owner while the request runs as another. The refusal is a 401
// naming the duplicate, a problem on /v1/jobs and OpenAI's shape on chat, and
// nothing is stored. Found by review: the first header silently won.
func TestTwoAuthorizationHeadersAreRefused(t *testing.T) {
	b := setup(t, options{})
	for _, order := range [][2]string{{acmeKey, globexKey}, {globexKey, acmeKey}, {acmeKey, acmeKey}} {
		for _, ep := range []struct{ path, body, kind string }{
			{"/v1/jobs", triageBody("two auth"), `"type":"https://`},
			{"/v1/chat/completions", chatHi, `"code":"invalid_api_key"`},
		} {
			a := sendAuth(t, b, "POST", ep.path, ep.body, "Bearer "+order[0], "Bearer "+order[1])
			if a.status != http.StatusUnauthorized || !strings.Contains(a.body, "more than one Authorization header") ||
				!strings.Contains(a.body, ep.kind) {
				t.Errorf("%s with two Authorization headers (%s first): %d %s, want 401 naming the duplicate", ep.path, order[0], a.status, a.body)
			}
			if got := a.header.Get("WWW-Authenticate"); !strings.Contains(got, `error="invalid_request"`) {
				t.Errorf("%s: WWW-Authenticate %q, want error=\"invalid_request\"", ep.path, got)
			}
		}
	}
	if n := b.count(t, `SELECT count(*) FROM jobs`); n != 0 {
		t.Fatalf("%d jobs created under an ambiguous credential", n)
	}
}

// An Authorization header that is not "Bearer <key>" gets a 401 saying it is
// malformed and how, never "Missing API key" (a key was sent) nor "Unknown API
// key" (what was looked up was not the key), and never quoting the header (it
// holds the key). On chat it is in OpenAI's shape. The forms RFC 6750 allows
// — any case of "Bearer", several spaces before the key — still work. Found by
// review: "Bearer<TAB>key" was a missing key and "Bearer key extra" an
// unknown one.
func TestMalformedBearerIsNamed(t *testing.T) {
	b := setup(t, options{})
	malformed := map[string]string{
		"Bearer\t" + acmeKey:              "not a tab",
		"Bearer " + acmeKey + " extra":    "more than one word after Bearer",
		"Bearer " + acmeKey + "\textra":   "more than one word after Bearer",
		"Basic " + acmeKey:                "scheme is not Bearer",
		acmeKey:                           "single word",
		"Bearer \t" + acmeKey:             "not a tab",
		"Token " + acmeKey + " " + "more": "scheme is not Bearer",
	}
	for h, says := range malformed {
		for _, ep := range []struct{ method, path, body, kind string }{
			{"GET", "/v1/jobs", "", `"title":"Malformed Authorization header"`},
			{"POST", "/v1/chat/completions", chatHi, `"code":"invalid_api_key"`},
		} {
			a := sendAuth(t, b, ep.method, ep.path, ep.body, h)
			if a.status != http.StatusUnauthorized || !strings.Contains(a.body, says) || !strings.Contains(a.body, ep.kind) {
				t.Errorf("%s with Authorization %q: %d %s, want 401 saying %q", ep.path, h, a.status, a.body, says)
			}
			if strings.Contains(a.body, "Missing API key") || strings.Contains(a.body, "router keys create") ||
				strings.Contains(a.body, acmeKey) {
				t.Errorf("%s with Authorization %q: %s says missing/unknown, or quotes the key", ep.path, h, a.body)
			}
			if got := a.header.Get("WWW-Authenticate"); !strings.Contains(got, `error="invalid_request"`) {
				t.Errorf("%s with Authorization %q: WWW-Authenticate %q, want error=\"invalid_request\"", ep.path, h, got)
			}
		}
	}
	for _, h := range []string{"Bearer " + acmeKey, "bearer " + acmeKey, "BEARER   " + acmeKey} {
		if a := sendAuth(t, b, "GET", "/v1/jobs", "", h); a.status != http.StatusOK {
			t.Errorf("Authorization %q: %d %s, want 200", h, a.status, a.body)
		}
	}
	for _, h := range []string{"Bearer", "Bearer "} {
		if a := sendAuth(t, b, "GET", "/v1/jobs", "", h); a.status != http.StatusUnauthorized || !strings.Contains(a.body, "Missing API key") {
			t.Errorf("Authorization %q: %d %s, want 401 Missing API key", h, a.status, a.body)
		}
	}
}
