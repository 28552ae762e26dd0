package ops

import (
	"context"
	"strings"
	"time"

	"github.com/routerhq/router/internal/store"
	"github.com/routerhq/router/internal/webhook"
)

// The dashboard lists the events abandoned within abandonedWindow, the
// newest abandonedShown of them.
const (
	abandonedWindow = 24 * time.Hour
	abandonedShown  = 20
)

// deliveriesView is the dashboard's webhook deliveries section.
type deliveriesView struct {
	Pending int
	// FailingCount is the pending events whose last try failed; Failing
	// are the oldest of them, oldest first. InterruptedCount is the pending
	// events whose last try the router's own shutdown cut short
	// (webhook.InterruptedNote): the endpoint did not fail, River does not
	// count the attempt, and the event is tried again whatever its age, so
	// they are counted and shown apart, not as failing; Interrupted are the
	// oldest of them. Both counts are the store's, of every pending event
	// (store.WebhookDeliveryStats), not of those listed.
	FailingCount     int
	Failing          []*store.Event
	InterruptedCount int
	Interrupted      []*store.Event
	// Abandoned are the events given up on within the last AbandonedWindow
	// (nil when they could not be read: the error is listed on the page).
	Abandoned       *abandonedList
	AbandonedWindow string
}

// abandonedList is the events given up on recently: how many, and the
// newest of them, newest first.
type abandonedList struct {
	Count  int
	Events []abandonedRow
}

type abandonedRow struct {
	*store.AbandonedEvent
	Why string // abandonedCause
}

// deliveryReads are the deliveries section as read: the pending events'
// stats and the recently abandoned events, each with its error.
type deliveryReads struct {
	stats        store.DeliveryStats
	statsErr     error
	abandoned    store.AbandonedDeliveries
	abandonedErr error
}

// readDeliveries reads the deliveries section: the abandoned events only
// when the pending ones could be read (the section is not shown otherwise).
func (s *Server) readDeliveries(ctx context.Context) (r deliveryReads) {
	if r.stats, r.statsErr = s.store.WebhookDeliveryStats(ctx, webhook.InterruptedNote); r.statsErr != nil {
		return r
	}
	r.abandoned, r.abandonedErr = s.store.RecentlyAbandonedEvents(ctx, abandonedWindow, abandonedShown)
	return r
}

// view is the deliveries section, or nil when the pending deliveries could
// not be read; each error is added to d.Errors.
func (r deliveryReads) view(d *dashData) *deliveriesView {
	if r.statsErr != nil {
		d.Errors = append(d.Errors, "webhook deliveries: "+r.statsErr.Error())
		return nil
	}
	st := r.stats
	v := &deliveriesView{Pending: st.Pending, FailingCount: st.FailingCount, Failing: st.Failing,
		InterruptedCount: st.Interrupted, Interrupted: st.InterruptedEvents, AbandonedWindow: "24 h"}
	if r.abandonedErr != nil {
		d.Errors = append(d.Errors, "abandoned webhook deliveries: "+r.abandonedErr.Error())
	} else {
		v.Abandoned = &abandonedList{Count: r.abandoned.Count}
		for _, e := range r.abandoned.Events {
			v.Abandoned.Events = append(v.Abandoned.Events, abandonedRow{e, abandonedCause(e.LastError)})
		}
	}
	return v
}

// abandonedCause is why the dashboard says an event was abandoned: a 410's
// last error says so itself (webhook.GoneNote), as does one of a try that had
// no webhook or no secret to send with ("abandoned: …"); any other was the
// last try of an event webhooks.retry_for old.
func abandonedCause(lastError *string) string {
	c := deliveryCause(lastError)
	switch {
	case strings.Contains(c, webhook.GoneNote), strings.HasPrefix(c, "abandoned: "):
		return c
	case c == "":
		return "given up: the event was webhooks.retry_for old"
	}
	return "given up: the event was webhooks.retry_for old; its last try: " + c
}

// deliveryCause is what the dashboard shows of a failing delivery's last
// error: its status or cause, never the receiver's answer — receivers often
// echo the payload (the job, its result), which the page never shows. A
// non-2xx answer is its status (with the router's note on it: a 3xx's
// redirect note, a 410's abandonment note, webhook.GoneNote, a 101's
// webhook.InterimNote), and "(answer
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
	for _, note := range []string{webhook.RedirectNote, webhook.GoneNote, webhook.InterimNote} {
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
