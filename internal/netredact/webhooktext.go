package netredact

import (
	"cmp"
	"html"
	"net/url"
	"slices"
	"strings"
)

// WebhookText is text — a receiver's answer, which may quote the request it
// was sent — with each secret-bearing part of webhook URL u that it quotes
// shown as WebhookURL shows it, "…": the path past its first segment (the
// whole path when WebhookURL hides that segment too); that part alone when
// it is MinSecret bytes or more; each of its segments that may be a secret on
// its own (secretSegment: a JSON encoder that writes "\/" splits the path) —
// each of these escaped, unescaped, and as an HTML page quotes it
// (html.EscapeString); query values of MinSecret bytes or more, not a
// version (Query); and the password of the user information. Express's
// default 404, "Cannot POST /services/T…/B…/<token>", becomes "Cannot POST
// /services/…". When cut is true, text is the start of a longer text, and a
// secret-bearing part it ends partway into is hidden too (a limit cut the
// answer in the middle of it).
func WebhookText(text string, u *url.URL, cut bool) string {
	secrets := webhookSecrets(u)
	if len(secrets) == 0 || text == "" {
		return text
	}
	if cut {
		// A part the cut split in two: the longest end of text that begins
		// one past what WebhookURL shows of it. The text before it is cut
		// there too (it may end partway into another part).
		best, bestNew := 0, ""
		for _, s := range secrets {
			for n := min(len(s.old)-1, len(text)); n > len(s.shown) && n > best; n-- {
				if strings.HasSuffix(text, s.old[:n]) {
					best, bestNew = n, s.new
					break
				}
			}
		}
		if best > 0 {
			return WebhookText(text[:len(text)-best], u, true) + bestNew
		}
	}
	pairs := make([]string, 0, 2*len(secrets))
	for _, s := range secrets {
		pairs = append(pairs, s.old, s.new)
	}
	// The Replacer tries the olds in order at each position: longest first,
	// so a whole path wins over one of its segments.
	return strings.NewReplacer(pairs...).Replace(text)
}

// webhookSecret is a secret-bearing part of a webhook URL (old) as a text
// may quote it, what it is shown as instead (new), and the start of old that
// new shows (shown: new is shown + "…").
type webhookSecret struct{ old, new, shown string }

// webhookSecrets are the parts of u that WebhookText hides, longest first,
// without repeats.
func webhookSecrets(u *url.URL) []webhookSecret {
	var out []webhookSecret
	add := func(old, shown string) {
		if old == "" || old == shown || !strings.HasPrefix(old, shown) {
			return
		}
		for _, s := range out {
			if s.old == old {
				return
			}
		}
		out = append(out, webhookSecret{old: old, new: shown + "…", shown: shown})
	}
	// A path as sent, unescaped, and as an HTML page quotes either
	// (Express's 404 escapes '&' and quotes).
	addForms := func(escaped, shown string) {
		add(escaped, shown)
		add(html.EscapeString(escaped), html.EscapeString(shown))
		if p, err := url.PathUnescape(escaped); err == nil {
			q, _ := url.PathUnescape(shown)
			add(p, q)
			add(html.EscapeString(p), html.EscapeString(q))
		}
	}
	if path := u.EscapedPath(); u.Opaque == "" && path != "" {
		kept, hidden := firstSegment(path)
		if hidden {
			tail := path[len(kept):]
			addForms(path, kept)
			if len(tail) >= MinSecret {
				addForms(tail, "")
			}
			for seg := range strings.SplitSeq(tail, "/") {
				if p, err := url.PathUnescape(seg); secretSegment(seg) || err == nil && secretSegment(p) {
					addForms(seg, "")
				}
			}
		}
	}
	for kv := range strings.FieldsFuncSeq(u.RawQuery, func(c rune) bool { return c == '&' || c == ';' }) {
		k, v, hasValue := strings.Cut(kv, "=")
		if name, err := url.QueryUnescape(k); err == nil && VersionParam(name) || !hasValue || len(v) < MinSecret {
			continue
		}
		add(v, "")
		if p, err := url.QueryUnescape(v); err == nil && len(p) >= MinSecret {
			add(p, "")
		}
	}
	if pw, ok := u.User.Password(); ok && len(pw) >= MinSecret {
		add(pw, "")
		add(url.QueryEscape(pw), "")
	}
	slices.SortStableFunc(out, func(a, b webhookSecret) int { return cmp.Compare(len(b.old), len(a.old)) })
	return out
}

// secretSegment says whether a segment of a webhook URL's hidden path may be
// a secret wherever a text quotes it, even away from the rest of the path:
// MinSecret bytes or more, with something besides lower-case letters, '-',
// '_' and '.' (a digit or a capital: "T024BE7LD", a token). A word such as
// "webhooks" or "my-endpoint" is left alone elsewhere in the text.
func secretSegment(seg string) bool {
	return len(seg) >= MinSecret && strings.ContainsFunc(seg, func(r rune) bool {
		return !('a' <= r && r <= 'z' || r == '-' || r == '_' || r == '.')
	})
}
