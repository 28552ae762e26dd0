package api

import (
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	rfcproblem "github.com/routerhq/router/internal/problem"
)

// refuseQuery is the check of an endpoint that reads no query parameter
// (creating a job, cancelling, retrying or resolving one; reading one or its
// events, GET /v1/jobs/{id}?wait=30 included): a request with any
// is refused (400 invalid-request, naming them as GET /v1/jobs names one it
// does not read) before anything is done, so that an option written as a
// query parameter, the way many APIs take them (?dry_run=true on a cancel,
// ?route=fallback on a retry), is not silently ignored while the action is
// taken. takes says where the endpoint's options go instead. A bare "?", or
// separators with no parameter, names none and goes ahead.
func refuseQuery(r *http.Request, endpoint, takes string) *problem {
	if r.URL.RawQuery == "" {
		return nil
	}
	q, err := url.ParseQuery(r.URL.RawQuery)
	names := make([]string, 0, len(q))
	for name := range q {
		names = append(names, name)
	}
	var got string
	switch {
	case len(names) > 0:
		got = strings.Join(quotedParams(names), ", ")
	case err != nil:
		got = "the query string " + strconv.Quote(rfcproblem.Clip(r.URL.RawQuery))
	default:
		return nil
	}
	return &problem{Status: http.StatusBadRequest, Type: "invalid-request", Title: "Query parameter not accepted",
		Detail: endpoint + " takes no query parameters, and this request has " + got + ": nothing was done; " + takes +
			". Send the request again without the query string."}
}

// quotedParams is names, query parameter names as a caller sent them,
// sorted and each quoted (clipped, as a name may be as long as the request
// line), for a refusal that names them. It sorts names in place.
func quotedParams(names []string) []string {
	slices.Sort(names)
	quoted := make([]string, len(names))
	for i, name := range names {
		quoted[i] = strconv.Quote(rfcproblem.Clip(name))
	}
	return quoted
}

// refuseJobQuery answers a request about job id (endpoint) sent with a query
// parameter, which it does not read (refuseQuery; takes says what it reads
// instead), and reports whether it did: as a cancel's is (refuseForJob), the
// refusal is the plain 404 job-not-found when owner has no such job, and
// names the job only when it is owner's.
func (s *Server) refuseJobQuery(w http.ResponseWriter, r *http.Request, owner, id, endpoint, takes string) bool {
	perr := refuseQuery(r, endpoint, takes)
	if perr == nil {
		return false
	}
	s.refuseForJob(w, r, owner, id, *perr)
	return true
}
