package netredact

import (
	"net/url"
	"strings"
)

// WebhookURL is a webhook URL as a message or a log shows it: as URL shows
// it, and besides without its path past the first segment, which is "…".
// A receiver's path is often its credential (Slack's
// /services/T…/B…/<token>, Discord's /api/webhooks/<id>/<token>, a
// catch-all service's /<uuid>), and whoever holds the URL can post to the
// receiver as the router. The first segment is shown only when it reads as a
// word (shorter than MinSecret bytes, or with no digit: "services", "api",
// "hooks"), so that two webhooks on one host stay apart; a fragment is shown
// as "#…". A provider's base_url is shown by URL instead: its path is the
// API's, and messages suggest paths from it.
func WebhookURL(u *url.URL) string {
	c := *u
	c.User = nil
	c.RawQuery, c.ForceQuery = "", false
	c.Fragment, c.RawFragment = "", ""
	hidden := false
	if c.Opaque != "" { // https:hooks.example/… (no //): the path is opaque
		c.Opaque, hidden = firstSegment(c.Opaque)
	} else {
		var path string
		path, hidden = firstSegment(u.EscapedPath())
		c.Path, c.RawPath = path, path
		if p, err := url.PathUnescape(path); err == nil {
			c.Path = p
		}
	}
	var b strings.Builder
	b.WriteString(c.String())
	if hidden {
		b.WriteString("…")
	}
	if u.RawQuery != "" || u.ForceQuery {
		b.WriteString("?" + Query(u.RawQuery))
	}
	if u.Fragment != "" {
		b.WriteString("#…")
	}
	return b.String()
}

// WebhookURLText is raw as WebhookURL shows it, or, when it does not parse,
// a note that it is not shown (url.Parse's error quotes it whole).
func WebhookURLText(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(a URL that does not parse, not shown)"
	}
	return WebhookURL(u)
}

// firstSegment is an escaped path (or opaque part) cut after its first
// segment, or before it when that segment may be a secret, and whether
// anything was cut.
func firstSegment(path string) (kept string, cut bool) {
	lead := ""
	if strings.HasPrefix(path, "/") {
		lead, path = "/", path[1:]
	}
	seg, rest, more := strings.Cut(path, "/")
	switch {
	case !wordLike(seg):
		return lead, seg != "" || rest != ""
	case !more:
		return lead + seg, false
	default:
		return lead + seg + "/", rest != ""
	}
}

// wordLike says whether a path segment reads as a word, not a secret:
// shorter than MinSecret bytes, or with no digit.
func wordLike(seg string) bool {
	return len(seg) < MinSecret || !strings.ContainsAny(seg, "0123456789")
}
