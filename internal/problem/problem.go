// Package problem owns the router's problem+json answers (RFC 9457): the
// problem detail type, its `type` URI scheme (short names under
// https://router.dev/problems/) and the one writer that both HTTP surfaces
// use, the tenant API (internal/api) and the operator surface (internal/ops).
//
// It knows only the members every problem has (type, title, status, detail,
// instance), the request id and extension members given to it. It must not
// import the packages that use it nor reach into requests: what a surface
// adds (a job id, violations, the request id from its context) it passes in.
package problem

import (
	"encoding/json"
	"net/http"
	"strings"
	"unicode/utf8"
)

// TypeBase prefixes a problem type given as a short name ("job-not-found").
const TypeBase = "https://router.dev/problems/"

// ContentType is the media type of every problem answer.
const ContentType = "application/problem+json"

// Details is one problem detail.
type Details struct {
	// Type is a short name under TypeBase, a full http(s) URI kept as it is,
	// or empty for "about:blank" (RFC 9457 §4.2.1).
	Type   string `json:"type"`
	Title  string `json:"title"`
	Status int    `json:"status"`
	Detail string `json:"detail"`
	// Instance is left out when empty; Write fills it with the request's
	// path, cut short (clipPath) when long.
	Instance string `json:"instance,omitempty"`
	// RequestID is written as "request_id", only when not empty.
	RequestID string `json:"request_id,omitempty"`
	// Extra holds extension members, written as given. A key naming one of
	// the members above is dropped: Extra never replaces them.
	Extra map[string]any `json:"-"`
}

// members are the members of Details itself, which Extra never replaces.
var members = map[string]bool{"type": true, "title": true, "status": true, "detail": true,
	"instance": true, "request_id": true}

// Write answers r with d: status d.Status, Content-Type application/problem+json,
// Cache-Control no-store and one JSON object whose members are in name order.
func Write(w http.ResponseWriter, r *http.Request, d Details) {
	switch {
	case d.Type == "":
		d.Type = "about:blank"
	case !strings.HasPrefix(d.Type, "https://") && !strings.HasPrefix(d.Type, "http://"):
		d.Type = TypeBase + d.Type
	}
	if d.Instance == "" {
		d.Instance = clipPath(r.URL.Path)
	}
	body := map[string]any{}
	raw, _ := json.Marshal(d)
	_ = json.Unmarshal(raw, &body)
	for k, v := range d.Extra {
		if !members[k] {
			body[k] = v
		}
	}
	w.Header().Set("Content-Type", ContentType)
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(d.Status)
	_ = json.NewEncoder(w).Encode(body)
}

// Clip keeps a caller's text (an unknown query parameter's name) short
// enough to quote back in a detail: at most 64 bytes, cut at a character's
// start, with "…" when cut.
func Clip(s string) string {
	const most = 64
	if len(s) <= most {
		return s
	}
	for i := most; i > 0; i-- {
		if utf8.RuneStart(s[i]) {
			return s[:i] + "…"
		}
	}
	return s[:most] + "…"
}

// InstanceBytes is the most a defaulted instance (the request's path) takes
// in the answer, as JSON writes it: a path is the caller's, up to net/http's
// header limit (about 1 MiB) on any request, authenticated or not, and an
// answer quoting it whole would be larger still (a byte that is not UTF-8
// takes 6, as \ufffd).
const InstanceBytes = 2 << 10

// clipPath is path, or when JSON would write it in more than InstanceBytes
// its first characters that fit, with "…".
func clipPath(path string) string {
	n := 0
	for i := 0; i < len(path); {
		r, size := utf8.DecodeRuneInString(path[i:])
		n += jsonWidth(r, size)
		if n > InstanceBytes {
			return path[:i] + "…"
		}
		i += size
	}
	return path
}

// jsonWidth is how many bytes encoding/json writes for the rune r, size
// bytes of a string (utf8.RuneError of size 1: a byte that is not UTF-8).
func jsonWidth(r rune, size int) int {
	switch {
	case r == utf8.RuneError && size == 1, r < 0x20, r == '<', r == '>', r == '&', r == '\u2028', r == '\u2029':
		return 6 // \ufffd, \u00XX
	case r == '"', r == '\\':
		return 2
	}
	return size
}
