package config

import (
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/routerhq/router/internal/netredact"
)

// ValidateWebhookURL checks a webhook URL: absolute http or https with a host
// name (or address) and, if it has one, a port from 1 to 65535; no white
// space, no credentials, no fragment. Messages show the URL as
// netredact.WebhookURL does (no user information, query values that may be
// secrets as …, the path past its first segment as …): they end up in logs
// and terminals, and a receiver's URL often carries its secret (?token=…,
// Slack's /services/…/<token>, Discord's /api/webhooks/<id>/<token>); the
// caller names the webhook by its owner or key.
//
// A URL no delivery can reach is refused here rather than found out from
// the deliveries: every try of it would fail for webhooks.retry_for (24 h by
// default) before its events are abandoned.
func ValidateWebhookURL(raw string) error {
	if raw == "" {
		return fmt.Errorf("is required (an https:// URL that accepts POST)")
	}
	if err := webhookURLSpace(raw); err != nil {
		return err
	}
	u, err := url.Parse(raw)
	if err != nil {
		// url.Error repeats the whole URL, password included: keep its cause.
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return fmt.Errorf("is not a URL: %v", err)
	}
	shown := netredact.WebhookURL(u)
	if u.Scheme != "https" && u.Scheme != "http" {
		return fmt.Errorf("%q must start with https:// (or http://)", shown)
	}
	if u.Host == "" {
		return fmt.Errorf("%q has no host", shown)
	}
	// A host that is only a port ("https://:8443/hook") names no machine:
	// the dialer would connect to the router's own (net.Dial reads an empty
	// host as the local system).
	if u.Hostname() == "" {
		return fmt.Errorf("%q has a port but no host name: write the receiver's host before the port (https://hooks.example.com:8443/...)", shown)
	}
	// url.Parse takes any digits as a port: port 0 or one past 65535 cannot
	// be dialled, so every delivery would fail.
	if p := u.Port(); p != "" {
		if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
			return fmt.Errorf("%q has port %s, which is not a TCP port (1 to 65535): write the port the receiver listens on (https://hooks.example.com:8443/...), "+
				"or leave the port out to use the scheme's (443 for https, 80 for http)", shown, p)
		}
	}
	if u.User != nil {
		return fmt.Errorf("%q must not carry credentials: events are authenticated by their signature", shown)
	}
	if u.Fragment != "" {
		return fmt.Errorf("%q must not have a #fragment", shown)
	}
	return nil
}

// webhookURLSpace refuses a webhook URL holding white space — most often a
// space or line break pasted with it. At its start or in its host the URL
// does not parse; in its path it would be sent (as %20) as part of the path,
// which the receiver answers 404. The message shows the URL trimmed, as
// written when nothing in it may be a secret, else as netredact.WebhookURL
// shows it; none when it does not parse.
func webhookURLSpace(raw string) error {
	at := strings.IndexFunc(raw, unicode.IsSpace)
	if at < 0 {
		return nil
	}
	trimmed := strings.TrimSpace(raw)
	if trimmed == "" {
		return fmt.Errorf("is blank: give the https:// URL the owner's job completion events are POSTed to")
	}
	// As written (url.URL's String would show a space as %20) when
	// netredact would hide nothing.
	shown := ""
	if u, err := url.Parse(trimmed); err == nil {
		shown = fmt.Sprintf("%q ", trimmed)
		if redacted := netredact.WebhookURL(u); redacted != u.String() {
			shown = fmt.Sprintf("%q ", redacted)
		}
	}
	switch {
	case trimmed != raw && strings.IndexFunc(trimmed, unicode.IsSpace) < 0:
		where := "at its end"
		if at == 0 {
			where = "at its start"
		}
		return fmt.Errorf("%shas white space %s (pasted with the URL?): remove it; with it no delivery reaches the receiver", shown, where)
	default:
		return fmt.Errorf("%shas white space inside it (character %d): a URL holds none; remove it, or write a space that belongs in the receiver's path as %%20", shown, utf8.RuneCountInString(raw[:at])+1)
	}
}

// WebhookDeliveryTries is River's max_attempts for a webhook delivery job, as
// internal/store/complete.go enqueues it (a test keeps the two equal). Past it
// River's stuck-job rescuer discards a job instead of retrying it, so the
// backoff must not let the tries run out within webhooks.retry_for.
const WebhookDeliveryTries = 10000

// minDeliverySpan is the shortest time a delivery's first tries can take,
// counted up to at most limit (it saturates there, so huge settings cannot
// overflow): the wait after the n-th failed try is drawn from [d/2, d], d =
// min(base·2^(n-1), cap) (internal/webhook.Backoff), so this sums the d/2 of
// every wait before the last try that may still give up on its own, the
// (tries-1)-th: one try is kept in hand, so an event whose window has passed
// is abandoned by a try (and shows so) rather than discarded by the rescuer.
func minDeliverySpan(base, cap time.Duration, tries int, limit time.Duration) time.Duration {
	var span time.Duration
	d := base
	for n := 1; n <= tries-2; n++ {
		step := min(d, cap) / 2
		if step >= limit-span {
			return limit
		}
		span += step
		if d > cap/2 {
			d = cap
		} else {
			d *= 2
		}
	}
	return span
}

// backoffCapProblem refuses a webhooks.backoff_cap so short that River's
// WebhookDeliveryTries can all be spent before retry_for has passed. The
// floor follows retry_for and backoff_base; with the defaults (24h, 5s) it is
// 17.3s: a flat 15s would not do, as waits drawn low in their jitter could
// spend the tries in under 21h.
func (w Webhooks) backoffCapProblem() string {
	base, cap, retryFor := w.BackoffBase.D(), w.BackoffCap.D(), w.RetryFor.D()
	if base <= 0 || cap < base || retryFor <= 0 {
		return "" // other messages cover base > cap and values out of range
	}
	span := minDeliverySpan(base, cap, WebhookDeliveryTries, retryFor)
	if span >= retryFor {
		return ""
	}
	// The least cap (to the 100ms above) that holds: the span grows with the
	// cap, and a cap of retry_for itself holds.
	lo, hi := cap, retryFor
	for hi-lo > 100*time.Millisecond {
		mid := lo + (hi-lo)/2
		if minDeliverySpan(base, mid, WebhookDeliveryTries, retryFor) >= retryFor {
			hi = mid
		} else {
			lo = mid
		}
	}
	need := hi.Truncate(100 * time.Millisecond)
	if minDeliverySpan(base, need, WebhookDeliveryTries, retryFor) < retryFor {
		need += 100 * time.Millisecond
	}
	return fmt.Sprintf("webhooks.backoff_cap (%s) is too short for webhooks.retry_for (%s): a delivery gets %d tries, and with waits drawn from [backoff_cap/2, backoff_cap] they can run out in %s, before retry_for ends, leaving the event neither delivered nor abandoned; set backoff_cap to at least %s (or shorten retry_for)",
		cap, retryFor, WebhookDeliveryTries, span.Round(time.Minute), need)
}
