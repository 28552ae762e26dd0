package api

import (
	"bytes"
	"fmt"
	"net/http"
	"strings"

	"github.com/routerhq/router/internal/jsontext"
)

// utf8BOM is the UTF-8 encoding of U+FEFF, the byte-order mark.
var utf8BOM = []byte{0xEF, 0xBB, 0xBF}

// checkEncoding refuses a body whose text the router cannot keep: bytes that
// are not UTF-8 (RFC 8259 §8.1), and the JSON escapes of characters that are
// not characters or that PostgreSQL's jsonb cannot store (\u0000, a lone UTF-16
// surrogate). encoding/json keeps raw fields (a job's input) as sent, which the
// database then refuses; the caller gets a 400 naming the place instead of a 500.
//
// A body that starts with a byte-order mark is refused too, by name: JSON
// must not carry one (RFC 8259 §8.1), and encoding/json's own refusal
// ("invalid character 'ï' looking for beginning of value") names a character
// the caller never wrote. It is not skipped: the job's fingerprint is of the
// request as sent, so a body taken with and without the mark would need a
// rule for which is the same request; refusing needs none.
func checkEncoding(body []byte) *problem {
	if bytes.HasPrefix(body, utf8BOM) {
		return &problem{Status: http.StatusBadRequest, Type: "invalid-encoding", Title: "Body starts with a byte-order mark",
			Detail: "the body starts with a UTF-8 byte-order mark (EF BB BF): send JSON without it"}
	}
	e := jsontext.Check(body)
	if e == nil {
		return nil
	}
	return &problem{Status: http.StatusBadRequest, Type: "invalid-encoding", Title: "Body is not valid UTF-8 text",
		Detail: "the body holds " + e.Error() + ": send JSON encoded as UTF-8, without NUL characters, " +
			"and escape a character outside the BMP as a high and low surrogate pair (or send it as UTF-8)"}
}

// refuseContentEncoding refuses a request whose body is sent compressed
// (Content-Encoding other than identity), before the body is decoded: the
// router reads bodies as they come, and a gzip body was refused as text that
// is not UTF-8, which says nothing of the compression. The answer is 415
// (RFC 9110 §15.5.16) with Accept-Encoding: identity, the encodings the
// router takes (RFC 7694 §3); nil for a body sent uncompressed.
func refuseContentEncoding(w http.ResponseWriter, r *http.Request) *problem {
	values := r.Header.Values("Content-Encoding")
	for _, v := range values {
		for coding := range strings.SplitSeq(v, ",") {
			if c := strings.TrimSpace(coding); c != "" && !strings.EqualFold(c, "identity") {
				w.Header().Set("Accept-Encoding", "identity")
				return &problem{Status: http.StatusUnsupportedMediaType, Type: "unsupported-content-encoding", Title: "Compressed body",
					Detail: fmt.Sprintf("the body was sent with Content-Encoding %q, and request bodies must be sent uncompressed: "+
						"send the JSON as it is, without Content-Encoding", quoteStart([]byte(strings.Join(values, ", "))))}
			}
		}
	}
	return nil
}
