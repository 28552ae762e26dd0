package providers

import (
	"fmt"
	"net/http"
)

// switchedProtocols is the error for a final 1xx answer — in practice 101
// Switching Protocols, which the router never asks for (a proxy in front of
// the API, or a hostile endpoint). Go's client hands a 101's connection to
// the caller as its body, detached from the request's deadline: a read of it
// would wait until the other end closed it, holding the attempt past its
// timeout. The body is closed by the caller, which closes the connection.
func switchedProtocols(provider string, resp *http.Response) *Error {
	if resp.StatusCode >= 200 {
		return nil
	}
	e := NewError(provider, KindMisconfigured, fmt.Sprintf(
		"HTTP %d %s from the target, which the router never asks for: an operator must check the target's base_url (a proxy in front of the API?)",
		resp.StatusCode, http.StatusText(resp.StatusCode)))
	e.StatusCode = resp.StatusCode
	return e
}
