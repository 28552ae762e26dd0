package providers

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// An error status whose body is a web page from a proxy or CDN in front of
// the API (Cloudflare's 524, nginx's 502 or 413) became the error's message
// as raw markup. The message names the status and the page's title,
// sanitised and bounded, never the markup. Found by review.
func TestHTMLErrorPageMessage(t *testing.T) {
	const cloudflare524 = `<!DOCTYPE html>
<!--[if lt IE 7]> <html class="no-js ie6 oldie" lang="en-US"> <![endif]-->
<!--[if IE 7]>    <html class="no-js ie7 oldie" lang="en-US"> <![endif]-->
<!--[if IE 8]>    <html class="no-js ie8 oldie" lang="en-US"> <![endif]-->
<!--[if gt IE 8]><!--> <html class="no-js" lang="en-US"> <!--<![endif]-->
<head>
<title>api.example.com | 524: A timeout occurred</title>
</head><body><h1>A timeout occurred</h1></body></html>`
	for _, stream := range []bool{false, true} {
		t.Run(fmt.Sprintf("stream=%v", stream), func(t *testing.T) {
			srv := newFakeServer(t, func(w http.ResponseWriter, _ *http.Request) {
				w.Header().Set("Content-Type", "text/html; charset=UTF-8")
				w.WriteHeader(524)
				fmt.Fprint(w, cloudflare524)
			})
			p := newTestAdapter(t, srv.URL, func(c *OpenAIConfig) { c.Stream = stream })
			_, err := p.Complete(context.Background(), testRequest())
			e := mustError(t, err)
			if strings.Contains(e.Message, "<!") || strings.Contains(e.Message, "<html") || !strings.Contains(e.Message, "524") {
				t.Errorf("message %q: markup instead of what happened", e.Message)
			}
			if !strings.Contains(e.Message, `(title: "api.example.com | 524: A timeout occurred")`) || !strings.Contains(e.Message, "HTML page") {
				t.Errorf("message %q does not say it was an HTML page, and its title", e.Message)
			}
			if e.Kind != KindServerError || e.StatusCode != 524 {
				t.Errorf("got %s (HTTP %d), want server_error (HTTP 524)", e.Kind, e.StatusCode)
			}
		})
	}
}

// Other pages: nginx's (no doctype, a title with an entity), one without a
// title, one whose title is long or holds control characters, an XML error.
// None is quoted as markup; the kind is the status's.
func TestMarkupErrorBodies(t *testing.T) {
	long := strings.Repeat("é", 200)
	cases := []struct {
		name   string
		status int
		body   string
		kind   Kind
		want   string
	}{
		{"nginx 502", 502, "<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n<center><h1>502 Bad Gateway</h1></center>\r\n<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n",
			KindServerError, `HTTP 502 from the target: an HTML page from a proxy or CDN in front of it, not the API's error (title: "502 Bad Gateway")`},
		{"nginx 413", 413, "<html><head><title>413 Request Entity Too Large</title></head><body></body></html>", KindBadRequest, `(title: "413 Request Entity Too Large")`},
		{"entity and spaces", 503, "\ufeff  <HTML><TITLE>\n  Busy &amp; \x00 <b>closed</b>  </TITLE></HTML>", KindUnavailable, `(title: "Busy & b closed /b")`},
		{"no title", 500, "<html><body>oops</body></html>", KindServerError, "HTTP 500 from the target: an HTML page from a proxy or CDN in front of it, not the API's error; if it recurs"},
		{"long title", 500, "<html><title>" + long + "</title></html>", KindServerError, "…\")"},
		{"xml", 503, `<?xml version="1.0"?><Error><Code>ServiceUnavailable</Code></Error>`, KindUnavailable, "HTTP 503 from the target: an XML document, not the API's error"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			srv := newFakeServer(t, func(w http.ResponseWriter, _ *http.Request) {
				w.Header().Set("Content-Type", "text/html")
				w.WriteHeader(c.status)
				fmt.Fprint(w, c.body)
			})
			_, err := newTestAdapter(t, srv.URL, nil).Complete(context.Background(), testRequest())
			e := mustError(t, err)
			if e.Kind != c.kind || !strings.Contains(e.Message, c.want) {
				t.Errorf("got %s %q, want %s with %q", e.Kind, e.Message, c.kind, c.want)
			}
			if strings.ContainsAny(e.Message, "<>\x00") {
				t.Errorf("message %q holds markup or a control character", e.Message)
			}
			if len(e.Message) > maxMessage+len("…") {
				t.Errorf("message of %d bytes", len(e.Message))
			}
		})
	}
}
