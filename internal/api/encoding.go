package api

import (
	"net/http"

	"github.com/routerhq/router/internal/jsontext"
)

// checkEncoding refuses a body whose text the router cannot keep: bytes that
// are not UTF-8 (RFC 8259 §8.1), and the JSON escapes of characters that are
// not characters or that PostgreSQL's jsonb cannot store (\u0000, a lone UTF-16
// surrogate). encoding/json keeps raw fields (a job's input) as sent, which the
// database then refuses; the caller gets a 400 naming the place instead of a 500.
func checkEncoding(body []byte) *problem {
	e := jsontext.Check(body)
	if e == nil {
		return nil
	}
	return &problem{Status: http.StatusBadRequest, Type: "invalid-encoding", Title: "Body is not valid UTF-8 text",
		Detail: "the body holds " + e.Error() + ": send JSON encoded as UTF-8, without NUL characters, " +
			"and escape a character outside the BMP as a high and low surrogate pair (or send it as UTF-8)"}
}
