package ops

import (
	"strings"

	"github.com/routerhq/router/internal/webhook"
)

// deliveryCause is what the dashboard shows of a failing delivery's last
// error: its status or cause, never the receiver's answer — receivers often
// echo the payload (the job, its result), which the page never shows. A
// non-2xx answer is its status (with the router's note on it: a 3xx's
// redirect note, a 410's abandonment note, webhook.GoneNote), and "(answer
// not shown)" when the error quoted the body; any other error is the router's
// own words (no answer in time, a refused connection, no webhook or secret),
// shown whole. The owner reads the whole error from GET /v1/jobs/{id}/events.
func deliveryCause(lastError *string) string {
	if lastError == nil {
		return ""
	}
	rest, ok := strings.CutPrefix(*lastError, webhook.AnsweredPrefix)
	if !ok {
		return *lastError
	}
	i := 0
	for i < len(rest) && rest[i] >= '0' && rest[i] <= '9' {
		i++
	}
	cause := webhook.AnsweredPrefix + rest[:i]
	rest = rest[i:]
	for _, note := range []string{webhook.RedirectNote, webhook.GoneNote} {
		if r, ok := strings.CutPrefix(rest, note); ok {
			cause, rest = cause+note, r
			break
		}
	}
	if rest != "" {
		cause += " (answer not shown)"
	}
	return cause
}
