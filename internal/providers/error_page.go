package providers

import (
	"bytes"
	"errors"
	"fmt"
	"html"
	"net/http"
	"strings"
	"unicode"

	openai "github.com/sashabaranov/go-openai"

	"github.com/routerhq/router/internal/jsontext"
)

// maxPageTitle bounds the title of a web page quoted in an error's message
// (pageMessage).
const maxPageTitle = 100

// markupBody reports an error response body that is markup — an HTML page
// from a proxy or CDN in front of the API (Cloudflare's 524, nginx's 413 or
// 502), an XML error — not the API's JSON or plain-text error: it begins
// with '<' (after white space and a byte order mark).
func markupBody(body []byte) bool {
	b := bytes.TrimLeft(bytes.TrimPrefix(bytes.TrimLeft(body, " \t\r\n"), []byte("\ufeff")), " \t\r\n")
	return len(b) > 0 && b[0] == '<'
}

// pageMessage describes an error response whose body is markup (markupBody)
// by its status and, for an HTML page with one, its title, sanitised and
// bounded: the markup itself says nothing an operator can read in a message
// and would fill it.
func pageMessage(status int, body []byte) string {
	what := "an XML document, not the API's error"
	if isHTMLPage(body) {
		what = "an HTML page from a proxy or CDN in front of it, not the API's error"
	}
	m := fmt.Sprintf("HTTP %d from the target: %s", status, what)
	if t := pageTitle(body); t != "" {
		m += fmt.Sprintf(" (title: %q)", t)
	}
	return m + "; if it recurs, check the provider's status and the target's base_url"
}

// proxyPage gives an error whose status says the request is wrong (400,
// 413, 422) but whose body is markup (markupBody: nginx's 413 page for a
// body past its client_max_body_size, Cloudflare's 400 "Request Header Or
// Cookie Too Large") ActionFailover in place of a stop: it is the limit of
// a proxy in front of this one target, not the API's verdict on the
// request, and another target of the route (OpenAI takes request bodies of
// many MB) may take the same request. Its kind and fault stay the
// caller's: the target is well, and one tenant's oversized requests must
// not open its breaker for every tenant; when no target takes the request,
// the caller hears it was refused.
func proxyPage(e *Error) {
	if requestStatus(e.StatusCode) && e.Action == ActionStop {
		e.Action = ActionFailover
	}
}

// isHTMLPage reports markup that is an HTML page.
func isHTMLPage(body []byte) bool {
	head := strings.ToLower(string(body[:min(len(body), 4096)]))
	return strings.Contains(head, "<html") || strings.Contains(head, "<!doctype html") ||
		strings.Contains(head, "<head") || strings.Contains(head, "<body") || strings.Contains(head, "<title")
}

// pageTitle is the text of an HTML page's <title>, its entities decoded, its
// white space collapsed, without markup or control characters, made storable and cut to
// maxPageTitle bytes; "" when it has none.
func pageTitle(body []byte) string {
	lower := bytes.ToLower(body)
	i := bytes.Index(lower, []byte("<title"))
	if i < 0 {
		return ""
	}
	j := bytes.IndexByte(lower[i:], '>')
	if j < 0 {
		return ""
	}
	start := i + j + 1
	end := bytes.Index(lower[start:], []byte("</title"))
	if end < 0 {
		return ""
	}
	t := html.UnescapeString(string(body[start : start+end]))
	t = strings.Join(strings.Fields(strings.Map(func(r rune) rune {
		if r == '<' || r == '>' || unicode.IsControl(r) {
			return ' '
		}
		return r
	}, t)), " ")
	if t = strings.TrimSpace(jsontext.SanitizeString(t)); len(t) > maxPageTitle {
		t = cutAt(t, maxPageTitle) + "…"
	}
	return t
}

// apiErrorObject reports whether err, a call's error, holds an API's error:
// an error object go-openai decoded, or a body in one of the other shapes
// bodyError reads. A 404 without one is the server's answer for a path it
// does not have (routeNotFound).
func apiErrorObject(err error) bool {
	var apiErr *openai.APIError
	if errors.As(err, &apiErr) && (apiErr.Message != "" || apiErr.Type != "" || apiCode(apiErr) != "") {
		return true
	}
	var reqErr *openai.RequestError
	if !errors.As(err, &reqErr) {
		return false
	}
	_, _, _, found := decodeBodyError(reqErr.Body)
	return found
}

// routeNotFound rewrites the message of a 404 without an API error object
// (apiErrorObject) — Ollama's text/plain "404 page not found", vLLM's and
// FastAPI's {"detail": "Not Found"}, a web server's page —: the server at
// the target's base_url has no such path, most often because base_url lacks
// its /v1; less often the model is not served. It stays model_not_found
// (failed over, the router's configuration); the message names both settings
// to check, and the model sent. The server's words stay in ProviderMessage.
func routeNotFound(e *Error, model string) {
	if e.ProviderMessage == "" {
		e.ProviderMessage = e.Message
	}
	e.Message = truncate(fmt.Sprintf("HTTP %d without an API error from the target: the server has no such path or model: "+
		"an operator must check the target's base_url, which for an OpenAI-compatible server usually ends in /v1 (http://host:port/v1), "+
		"and its model %q", http.StatusNotFound, model))
}
