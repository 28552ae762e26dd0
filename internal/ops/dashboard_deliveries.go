package ops

import "strings"

// webhookAnswered begins the error the webhook package stores for a try
// answered with a non-2xx status ("the webhook answered 500", see
// internal/webhook's send), which goes on with a redirect's note and then
// ": " and the start of the answer's body; webhookRedirect is that note.
const (
	webhookAnswered = "the webhook answered "
	webhookRedirect = " (a redirect, not followed: set the webhook URL to its target)"
)

// deliveryCause is what the dashboard shows of a failing delivery's last
// error: its status or cause, never the receiver's answer — receivers often
// echo the payload (the job, its result), which the page never shows. A
// non-2xx answer is its status (with the redirect note), and "(answer not
// shown)" when the error quoted the body; any other error is the router's
// own words (no answer in time, a refused connection, no webhook or secret),
// shown whole. The owner reads the whole error from GET /v1/jobs/{id}/events.
func deliveryCause(lastError *string) string {
	if lastError == nil {
		return ""
	}
	rest, ok := strings.CutPrefix(*lastError, webhookAnswered)
	if !ok {
		return *lastError
	}
	i := 0
	for i < len(rest) && rest[i] >= '0' && rest[i] <= '9' {
		i++
	}
	cause := webhookAnswered + rest[:i]
	rest = rest[i:]
	if r, ok := strings.CutPrefix(rest, webhookRedirect); ok {
		cause, rest = cause+webhookRedirect, r
	}
	if rest != "" {
		cause += " (answer not shown)"
	}
	return cause
}
