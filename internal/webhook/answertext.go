package webhook

import (
	"net/url"
	"strings"

	"github.com/routerhq/router/internal/netredact"
)

// answerText is what a try's error quotes of a non-2xx answer from webhook
// URL u whose body begins with head (read up to answerExcerptBytes+1 bytes;
// more when the body went on past head, or may have: readAnswerHead):
// answerExcerpt, with what it quotes of u's secret-bearing parts shown as
// netredact.WebhookURL shows them, "…" (netredact.WebhookText). Many
// receivers' stock error pages quote the path they were asked for —
// Express's default 404 "Cannot POST /services/T…/B…/<token>", Spring Boot's
// "path", a redirect's <a href> — and the text is stored, handed to River
// (its "Job errored" log line, river_job.errors) and logged by tell: the
// URL's path or query is often the endpoint's credential, which the logs
// must not carry. GET /v1/jobs/{id}/events shows the same text: the owner
// reads the URL itself beside it (each try's url), so one text serves all.
// A part the excerpt's limit cut in two is hidden as well, whichever limit
// ended it: the excerpt's own, webhooks.max_response_bytes (which may be
// below it) or a read that broke off.
func answerText(head []byte, more bool, u *url.URL) string {
	text := answerExcerpt(head, more)
	cut := (more || len(head) > answerExcerptBytes) && text != ""
	if cut {
		text = strings.TrimSuffix(text, "…") // answerExcerpt's mark of the cut
	}
	if u != nil {
		text = netredact.WebhookText(text, u, cut)
	}
	if cut && !strings.HasSuffix(text, "…") {
		text += "…"
	}
	return text
}
