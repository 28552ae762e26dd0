package webhook

import (
	"fmt"
	"time"

	"github.com/routerhq/router/internal/store"
)

// removedWebhookError is the failed try of an event whose owner has no
// webhook because a replica's start marked its configured webhook removed
// and that webhook keeps its place until its window ends
// (store.Event.RemovedWebhook): a key made with --webhook-url does not take
// the owner meanwhile, and `router keys create --webhook-url` for it is
// refused. errNoWebhook's text would say that no such key exists and name
// that refused command; the way out of a removal made on purpose is `router
// keys forget-removed-webhook`, after which the owner's newest hooked key
// takes its events, pending ones included. Nor are such events meant to be
// abandoned: a key's webhook takes the owner by itself at the window's end,
// which comes after webhooks.retry_for.
type removedWebhookError struct {
	owner   string
	removal store.WebhookRemoval
}

// why says why the event is not sent, and how to mend it: the abandonment's
// text too.
func (e *removedWebhookError) why() string {
	return fmt.Sprintf("the owner has no webhook: its configured webhook (api_keys[].webhook) was removed at %s "+
		"by the start of a router replica whose configuration lacks it (an older configuration during a rolling update "+
		"or a rollback, or its removal), and keeps its place until %s (the database's clock): until then no key made "+
		"with --webhook-url takes the owner's events, and none can be created for it; if it was removed by mistake, "+
		"start a replica whose configuration has it, and the events are delivered to it; if it was removed on purpose, "+
		"run `router keys forget-removed-webhook --owner %s`: the owner's newest unrevoked key made with --webhook-url "+
		"then takes its events at once, pending ones included (an owner without one can be given one with "+
		"`router keys create --webhook-url` after it)",
		e.removal.At.UTC().Format(time.RFC3339), e.removal.Until.UTC().Format(time.RFC3339), e.owner)
}

func (e *removedWebhookError) Error() string {
	return e.why() + "; will be retried until the event is webhooks.retry_for old, then abandoned"
}
