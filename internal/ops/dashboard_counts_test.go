package ops_test

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"testing"

	"github.com/routerhq/router/internal/store"
	"github.com/routerhq/router/internal/testdb"
)

// The deliveries header counts every failing event in the database, not the
// 20 the page lists: with an endpoint down and events piling up it said "20
// failing". Found by review.
func TestDashboardFailingCountIsNotTheListCap(t *testing.T) {
	db := testdb.New(t, store.Options{})
	ctx := context.Background()
	if err := db.Store.SyncConfigWebhooks(ctx, map[string]string{"acme": "https://hooks.example.com/x"}); err != nil {
		t.Fatal(err)
	}
	for i := range 25 {
		failingDelivery(t, db, fmt.Sprintf("k%d", i))
	}
	m := regexp.MustCompile(`(\d+) failing \(the oldest (\d+) shown\)`).FindStringSubmatch(dashboardOf(t, db))
	if m == nil || m[1] != "25" || m[2] != "20" {
		t.Errorf("25 failing events in the database; the dashboard's header says %v, want 25 failing with the oldest 20 shown", m)
	}
}

// A job not yet started is pending, not running: the "jobs running" tile
// counted both, so a backlog looked like work in progress. Found by review.
func TestDashboardRunningTileCountsOnlyRunning(t *testing.T) {
	db := testdb.New(t, store.Options{})
	ctx := context.Background()
	input := json.RawMessage(`{"a":1}`)
	fp, _ := store.Fingerprint("op", "", "", input)
	if _, _, err := db.Store.CreateJob(ctx, store.NewJob{Owner: "acme", Operation: "op", IdempotencyKey: "k1", Fingerprint: fp,
		Route: "default", Input: input}); err != nil {
		t.Fatal(err)
	}
	var running, pending int
	if err := db.Pool.QueryRow(ctx, `SELECT count(*) FILTER (WHERE state = 'running'), count(*) FILTER (WHERE state = 'pending') FROM jobs`).Scan(&running, &pending); err != nil {
		t.Fatal(err)
	}
	if running != 0 || pending != 1 {
		t.Fatalf("set-up: %d running, %d pending; want 0 and 1", running, pending)
	}
	page := dashboardOf(t, db)
	tile := func(label string) string {
		m := regexp.MustCompile(`<b>(\d+)</b><span>` + label + `</span>`).FindStringSubmatch(page)
		if m == nil {
			return "none"
		}
		return m[1]
	}
	if r, p := tile("jobs running"), tile("jobs pending"); r != "0" || p != "1" {
		t.Errorf("0 running, 1 pending in the database; the tiles say running %s, pending %s", r, p)
	}
}
