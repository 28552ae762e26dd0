package providers

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// An error status whose body is a proxy's or CDN's web page (nginx's 413
// past client_max_body_size, Cloudflare's 524, nginx's 502) in front of an
// Anthropic target became, through the Anthropic adapter, the status's name
// ("Request Entity Too Large") or the SDK's error text, and a 413 page
// stopped the job as the caller's bad request, where the OpenAI adapter
// described the page (pageMessage) and failed the 413 over (proxyPage). The
// Anthropic adapter now does the same: kind by status, the page described,
// never quoted, a 400/413/422 page failed over and kept the caller's fault.
func TestAnthropicMarkupErrorBody(t *testing.T) {
	const page = "an HTML page from a proxy or CDN in front of it, not the API's error"
	cases := []struct {
		name   string
		status int
		body   string
		kind   Kind
		fault  Fault
		action Action
		want   string
	}{
		{"nginx 413", 413, "<html>\r\n<head><title>413 Request Entity Too Large</title></head>\r\n<body>\r\n<center><h1>413 Request Entity Too Large</h1></center>\r\n<hr><center>nginx/1.25.3</center>\r\n</body>\r\n</html>\r\n",
			KindBadRequest, FaultCaller, ActionFailover, `HTTP 413 from the target: ` + page + ` (title: "413 Request Entity Too Large")`},
		{"cloudflare 400", 400, `<html><head><title>400 Bad Request</title></head><body><center><h1>400 Bad Request</h1></center><center>Request Header Or Cookie Too Large</center><hr><center>cloudflare</center></body></html>`,
			KindBadRequest, FaultCaller, ActionFailover, `HTTP 400 from the target: ` + page + ` (title: "400 Bad Request")`},
		{"cloudflare 524", 524, "<!DOCTYPE html>\n<!--[if lt IE 7]> <html class=\"no-js ie6 oldie\" lang=\"en-US\"> <![endif]-->\n<html class=\"no-js\" lang=\"en-US\">\n<head>\n<title>api.example.com | 524: A timeout occurred</title>\n</head><body><h1>A timeout occurred</h1></body></html>",
			KindServerError, FaultProvider, ActionRetry, `HTTP 524 from the target: ` + page + ` (title: "api.example.com | 524: A timeout occurred")`},
		{"nginx 502", 502, "<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n<center><h1>502 Bad Gateway</h1></center>\r\n<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n",
			KindServerError, FaultProvider, ActionRetry, `HTTP 502 from the target: ` + page + ` (title: "502 Bad Gateway")`},
	}
	for _, c := range cases {
		for _, stream := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/stream=%v", c.name, stream), func(t *testing.T) {
				srv := newFakeServer(t, func(w http.ResponseWriter, _ *http.Request) {
					w.Header().Set("Content-Type", "text/html")
					w.WriteHeader(c.status)
					fmt.Fprint(w, c.body)
				})
				_, err := newAnthropicAdapter(t, srv.URL, func(a *AnthropicConfig) { a.Stream = stream }).Complete(context.Background(), testRequest())
				e := mustError(t, err)
				if e.Kind != c.kind || e.Fault != c.fault || e.Action != c.action || e.StatusCode != c.status {
					t.Errorf("%s/%s/%s (HTTP %d), want %s/%s/%s (HTTP %d); message %q",
						e.Kind, e.Fault, e.Action, e.StatusCode, c.kind, c.fault, c.action, c.status, e.Message)
				}
				if !strings.HasPrefix(e.Message, c.want) {
					t.Errorf("message %q, want it to begin %q", e.Message, c.want)
				}
				if strings.ContainsAny(e.Message, "<>") {
					t.Errorf("message %q holds markup", e.Message)
				}
				// The OpenAI adapter says the same of the same page.
				_, oerr := newTestAdapter(t, srv.URL, func(o *OpenAIConfig) { o.Stream = stream }).Complete(context.Background(), testRequest())
				o := mustError(t, oerr)
				if o.Kind != e.Kind || o.Fault != e.Fault || o.Action != e.Action || o.Message != e.Message {
					t.Errorf("anthropic %s/%s/%s %q, openai %s/%s/%s %q", e.Kind, e.Fault, e.Action, e.Message, o.Kind, o.Fault, o.Action, o.Message)
				}
			})
		}
	}
}
