package api

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// docs/api.md: cancel and retry take no body: "send none (or `{}`)";
// refuseBody's own doc: white space only, or `{}`, goes ahead. JSON's white
// space (RFC 8259 §2) is space, tab, LF and CR: an empty object written by a
// pretty-printer or a Windows client ("{\r\n}", "{\t}") is `{}` all the same,
// yet it is refused with 400 "takes no body" and nothing is done.
func TestEmptyObjectWithJSONWhiteSpaceIsNoBody(t *testing.T) {
	s := &Server{}
	s.cfg.MaxBodyBytes = 1 << 20
	for _, body := range []string{"{\r\n}", "{\t}", "{ \r\n\t}", "\r\n{\r\n}\r\n"} {
		r := httptest.NewRequest(http.MethodPost, "/v1/jobs/j1/cancel", strings.NewReader(body))
		if perr := s.refuseBody(httptest.NewRecorder(), r, "POST /v1/jobs/{id}/cancel"); perr != nil {
			t.Errorf("body %q (an empty JSON object): refused %d %q, want it taken as no body", body, perr.Status, perr.Detail)
		}
	}
}
