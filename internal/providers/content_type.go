package providers

import (
	"fmt"
	"mime"
	"net/http"
	"strings"
)

// answerType is what a call's 2xx answer must be: its Content-Type says
// whether it is the API's answer at all.
type answerType int

const (
	answerAny  answerType = iota // not checked (a lookup, a caller's own use)
	answerJSON                   // a non-streamed answer
	answerSSE                    // a streamed answer
)

// notTheAnswer is the error of a 2xx response whose Content-Type says it is
// a web page, not the API's answer: a proxy's or captive portal's HTML page,
// a web server at a wrong base_url. It is neither decoded (the SDK's wording
// about it, or a stream "cut" after reading a page as events) nor billed:
// stream_malformed for a streamed call, malformed_response otherwise,
// AnsweredWithError (the race estimates no usage for it, as for an error
// status), and Received (bytes came: the outcome is known).
//
// Only a page is refused: OpenAI-compatible servers and gateways label
// their answers loosely (no Content-Type, text/plain, a stream sent as
// application/json), and those are decoded as before. nil when resp may be
// the API's answer.
func notTheAnswer(provider string, want answerType, resp *http.Response) *Error {
	if want == answerAny || resp.StatusCode < 200 || resp.StatusCode > 299 {
		return nil
	}
	ct := resp.Header.Get("Content-Type")
	if !maybePage(ct) {
		return nil // every answer takes this path: no parse, no allocation
	}
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil || (mt != "text/html" && mt != "application/xhtml+xml") {
		return nil
	}
	kind := KindMalformedResponse
	if want == answerSSE {
		kind = KindStreamMalformed
	}
	e := NewError(provider, kind, truncate(fmt.Sprintf("HTTP %d with Content-Type %s: not the API's answer (check base_url)", resp.StatusCode, ct)))
	e.Received = true
	e.AnsweredWithError = true
	return e
}

// maybePage says whether Content-Type ct may name a web page (text/html,
// application/xhtml+xml), before it is parsed: a cheap look that lets the
// API's answers through without mime.ParseMediaType's allocations.
func maybePage(ct string) bool {
	ct = strings.TrimLeft(ct, " \t")
	return hasPrefixFold(ct, "text/html") || hasPrefixFold(ct, "application/xhtml+xml")
}

func hasPrefixFold(s, prefix string) bool {
	return len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix)
}
