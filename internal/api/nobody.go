package api

import (
	"bytes"
	"fmt"
	"net/http"
)

// refuseBody is the check of an action that takes no body (cancel, retry): a
// request without one, with white space only, or with `{}` goes ahead; any
// other body is refused (400) before the action is taken, so that a caller
// who thinks the action takes options (a route for the retry, a dry run for
// the cancel) learns it does not instead of having the action taken as if
// they had not been sent. The body is read with the usual limit.
func (s *Server) refuseBody(w http.ResponseWriter, r *http.Request, action string) *problem {
	if r.Body == nil || r.Body == http.NoBody {
		return nil
	}
	body, perr := s.readBody(w, r)
	if perr != nil {
		if perr.Type == "body-too-large" {
			perr.Detail += "; " + action + " takes no body: send none"
		}
		return perr
	}
	b := bytes.Trim(body, " \t\r\n")
	if len(b) == 0 || len(b) >= 2 && b[0] == '{' && b[len(b)-1] == '}' && len(bytes.Trim(b[1:len(b)-1], " \t\r\n")) == 0 {
		return nil
	}
	if perr := refuseContentEncoding(w, r); perr != nil {
		return perr
	}
	if perr := checkEncoding(body); perr != nil {
		return perr
	}
	return &problem{Status: http.StatusBadRequest, Type: "invalid-json", Title: "Body not expected",
		Detail: fmt.Sprintf("%s takes no body, and this one holds %q: send the request without a body (or with {}); nothing was done", action, quoteStart(b))}
}
