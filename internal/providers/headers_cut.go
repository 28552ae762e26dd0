package providers

import (
	"strconv"
	"strings"

	"golang.org/x/net/http/httpguts"

	"github.com/routerhq/router/internal/netredact"
)

// headersCut is the error of a call whose connection broke after the first
// byte of its response came and before the response's headers were whole
// (the status line, or a header line, broken off; a reset between header
// lines), and false for any other. Classified as a transport error it would
// be a connection_reset — retried on the same target, as a reset before any
// response byte is (SPEC §6.2) — or, for a line broken off part-way, a
// server that does not speak HTTP (notHTTP). But the provider had the
// request and began answering: the outcome is known and failed (SPEC §15),
// so it is malformed_response (stream_cut for a streamed call), Received,
// failed over. A server that answers with something that is not HTTP at all
// (an SSH banner, a status code that is not three digits) stays
// misconfigured: only a line that is the beginning of a valid one
// (cutShort) is taken as broken off.
func headersCut(provider string, w *CallWatch, err error, e *Error, streaming bool) (*Error, bool) {
	if e.StatusCode != 0 || !w.ResponseBegan() || w.FirstByte() > 0 {
		return nil, false // no response began, or its headers were whole
	}
	if e.Kind != KindConnReset && (e.Kind != KindMisconfigured || !notHTTP(err) || !cutShort(err)) {
		return nil, false
	}
	kind := KindMalformedResponse
	if streaming {
		kind = KindStreamCut
	}
	ne := NewError(provider, kind, truncate("the connection broke while the provider was sending its response's headers, after their first byte: "+
		"the request reached the provider and its answer is lost (not retried on this target); if it recurs, the provider or a proxy in front of it is failing: check its status and logs ("+
		netredact.ErrorText(err)+")"))
	ne.Err = err
	ne.Received = true
	return ne, true
}

// cutShortErrors are net/http's words for a response's first line or a
// header line it could not read, each followed by the line (or the part of
// it) in quotes, and whether that part is the beginning of a valid one.
var cutShortErrors = []struct {
	words string
	valid func(string) bool
}{
	// "HTT", "HTTP/1.": the status line broke off in its version.
	{"malformed HTTP response ", func(s string) bool {
		return s != "" && (strings.HasPrefix("HTTP/1.1", s) || strings.HasPrefix("HTTP/1.0", s))
	}},
	// "20": the status line broke off in its code.
	{"malformed HTTP status code ", func(s string) bool { return len(s) < 3 && allBytes(s, isDigit) }},
	// "Content-Ty": a header line broke off in its name.
	{"malformed MIME header: missing colon: ", httpguts.ValidHeaderFieldName},
}

// cutShort reports a notHTTP error about a line that is the beginning of a
// valid status or header line: the connection ended part-way through it
// (net/http reads a line the connection ends in as a whole one).
func cutShort(err error) bool {
	s := err.Error()
	for _, c := range cutShortErrors {
		i := strings.LastIndex(s, c.words)
		if i < 0 {
			continue
		}
		q, qerr := strconv.QuotedPrefix(s[i+len(c.words):])
		if qerr != nil {
			return false
		}
		line, uerr := strconv.Unquote(q)
		return uerr == nil && c.valid(line)
	}
	return false
}

func allBytes(s string, ok func(byte) bool) bool {
	for i := 0; i < len(s); i++ {
		if !ok(s[i]) {
			return false
		}
	}
	return true
}

func isDigit(b byte) bool { return '0' <= b && b <= '9' }
