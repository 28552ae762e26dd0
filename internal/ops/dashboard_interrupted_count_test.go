package ops_test

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/routerhq/router/internal/store"
	"github.com/routerhq/router/internal/testdb"
	"github.com/routerhq/router/internal/webhook"
)

// The events whose last try a shutdown cut short were told apart from the
// failing ones only among the 20 oldest the store listed: any beyond them
// stayed counted as failing (and were not shown as interrupted), so after a
// rolling restart with an endpoint down the failing count was too high. The
// store now counts and lists each kind itself.
func TestDashboardCountsInterruptedTriesBeyondTheListedOnes(t *testing.T) {
	db := testdb.New(t, store.Options{})
	ctx := context.Background()
	if err := db.Store.SyncConfigWebhooks(ctx, map[string]string{"acme": "https://hooks.example.com/x"}); err != nil {
		t.Fatal(err)
	}
	// One interrupted event among the oldest, 25 failing, then two more
	// interrupted ones newer than the 20 oldest pending events.
	interrupted := []string{failedDelivery(t, db, "cut0", webhook.InterruptedNote)}
	var failing []string
	for i := range 25 {
		failing = append(failing, failedDelivery(t, db, fmt.Sprintf("failing%d", i), webhook.AnsweredPrefix+"503"))
	}
	for i := 1; i <= 2; i++ {
		interrupted = append(interrupted, failedDelivery(t, db, fmt.Sprintf("cut%d", i), webhook.InterruptedNote))
	}
	page := dashboardOf(t, db)
	i := strings.Index(page, `id="deliveries"`)
	section := page[i : i+strings.Index(page[i:], "</section>")]
	if !strings.Contains(section, "28 pending · 25 failing (the oldest 20 shown)") {
		t.Errorf("25 events failing and 3 whose try a shutdown cut short: want \"28 pending · 25 failing (the oldest 20 shown)\":\n%s", section)
	}
	m := regexp.MustCompile(`Interrupted by a restart <small>(\d+) pending`).FindStringSubmatch(section)
	if m == nil || m[1] != "3" {
		t.Errorf("3 events whose try a shutdown cut short: the interrupted heading says %v, want 3 pending:\n%s", m, section)
	}
	h := strings.Index(section, "Interrupted by a restart")
	for n, ev := range failing {
		k := strings.Index(section, `data-event="`+ev+`"`)
		switch {
		case n < 20 && (k < 0 || h >= 0 && k > h):
			t.Errorf("the %dth oldest failing event is not listed among the failing ones", n+1)
		case n >= 20 && k >= 0:
			t.Errorf("the %dth oldest failing event is listed: only the oldest 20 should be", n+1)
		}
	}
	for n, ev := range interrupted {
		if k := strings.Index(section, `data-event="`+ev+`"`); k < 0 || k < h {
			t.Errorf("interrupted event %d is not listed under \"Interrupted by a restart\"", n+1)
		}
	}
}
