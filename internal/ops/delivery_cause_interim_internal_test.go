package ops

import (
	"testing"

	"github.com/routerhq/router/internal/webhook"
)

// A try answered 101 Switching Protocols stores the status with the router's
// note (webhook.InterimNote: the endpoint must answer the POST with a 2xx);
// the dashboard shows that note, as it shows a redirect's or a 410's, not
// "(answer not shown)" for an answer that was never read.
func TestDeliveryCauseShowsTheInterimNote(t *testing.T) {
	stored := webhook.AnsweredPrefix + "101" + webhook.InterimNote
	if got := deliveryCause(&stored); got != stored {
		t.Fatalf("deliveryCause(%q) = %q, want it whole", stored, got)
	}
}
