package store_test

import (
	"context"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/routerhq/router/internal/store"
	"github.com/routerhq/router/internal/testdb"
)

// abandonedMigration is the migration that adds job_events.abandoned_at.
func abandonedMigration(t *testing.T) store.Migration {
	t.Helper()
	ms, err := store.Migrations()
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range ms {
		if strings.HasSuffix(m.Name, "_abandoned_events_by_time.sql") {
			return m
		}
	}
	t.Fatal("no migration *_abandoned_events_by_time.sql")
	return store.Migration{}
}

func abandonedAt(t *testing.T, db *testdb.DB, ev string) *time.Time {
	t.Helper()
	var at *time.Time
	if err := db.Pool.QueryRow(context.Background(), `SELECT abandoned_at FROM job_events WHERE id = $1`, ev).Scan(&at); err != nil {
		t.Fatal(err)
	}
	return at
}

// An event's abandonment is dated on the database clock when its status
// becomes abandoned, whoever records it, and only then: a failed try, a
// delivery, and a try recorded late after the abandonment leave the date
// alone. RecentlyAbandonedEvents lists the event with that date.
func TestDeliveryAbandonedIsDatedAndListed(t *testing.T) {
	b := setup(t)
	ctx := context.Background()
	evs := events(t, b.st, b.db, 3)
	failed, delivered, gone := evs[0], evs[1], evs[2]
	try := func(ev, status string, code int) {
		t.Helper()
		if _, err := b.st.RecordDelivery(ctx, store.DeliveryTry{EventID: ev, Try: 1, URL: "https://acme.example/hook",
			StartedAt: time.Now(), StatusCode: code, Error: "the webhook answered", Status: status}); err != nil {
			t.Fatal(err)
		}
	}
	before, err := b.st.Now(ctx)
	if err != nil {
		t.Fatal(err)
	}
	try(failed, store.EventPending, 503)
	try(delivered, store.EventDelivered, 200)
	try(gone, store.EventAbandoned, 410)
	after, err := b.st.Now(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, ev := range []string{failed, delivered} {
		if at := abandonedAt(t, b.db, ev); at != nil {
			t.Errorf("event %s was not abandoned, yet dated abandoned at %v", ev, at)
		}
	}
	at := abandonedAt(t, b.db, gone)
	if at == nil || at.Before(before) || at.After(after) {
		t.Fatalf("the abandoned event is dated %v; want between %v and %v (the database clock at its record)", at, before, after)
	}
	try(gone, store.EventPending, 503) // a late record: the event stays abandoned
	if again := abandonedAt(t, b.db, gone); again == nil || !again.Equal(*at) {
		t.Errorf("a late try's record moved the abandonment from %v to %v", at, again)
	}

	ab, err := b.st.RecentlyAbandonedEvents(ctx, 24*time.Hour, 20)
	if err != nil {
		t.Fatal(err)
	}
	if ab.Count != 1 || len(ab.Events) != 1 || ab.Events[0].ID != gone || !ab.Events[0].AbandonedAt.Equal(*at) {
		t.Fatalf("recently abandoned: %d, %+v; want 1: event %s abandoned at %v", ab.Count, ab.Events, gone, at)
	}
	if e := ab.Events[0]; e.Status != store.EventAbandoned || e.Owner != "acme" || e.Tries != 2 {
		t.Errorf("the abandoned event read as %+v; want abandoned, of acme, 2 tries", e.Event)
	}
}

// The dashboard reads the recently abandoned events on every refresh of
// every open tab: the count and the list walk the partial index of
// abandoned events by date over the window, never the whole of job_events.
// The planner is kept off sequential scans, which it prefers on a small
// table: a query the index cannot serve still scans.
func TestRecentlyAbandonedEventsReadTheirIndex(t *testing.T) {
	b := setup(t)
	ctx := context.Background()
	evs := events(t, b.st, b.db, 2)
	if _, err := b.st.RecordDelivery(ctx, store.DeliveryTry{EventID: evs[0], Try: 1, URL: "https://acme.example/hook",
		StartedAt: time.Now(), StatusCode: 410, Error: "gone", Status: store.EventAbandoned}); err != nil {
		t.Fatal(err)
	}
	u, err := url.Parse(b.db.URL)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Set("options", "-c enable_seqscan=off")
	u.RawQuery = strings.ReplaceAll(q.Encode(), "+", "%20") // pgx reads a + as itself
	db := *b.db
	db.URL = u.String()
	pool, explained := explainingPool(t, &bundle{db: &db, st: b.st})
	st := store.New(pool, store.Options{})
	ab, err := st.RecentlyAbandonedEvents(ctx, 24*time.Hour, 20)
	if err != nil {
		t.Fatal(err)
	}
	if ab.Count != 1 || len(ab.Events) != 1 {
		t.Fatalf("recently abandoned: %d, %d listed; want 1", ab.Count, len(ab.Events))
	}
	plans := explained("abandoned_at > now()")
	if len(plans) != 2 {
		t.Fatalf("%d plans of the abandoned events' reads reported, want 2 (the count and the list)", len(plans))
	}
	for _, p := range plans {
		if !strings.Contains(p.JSON, `"Index Name": "job_events_abandoned"`) || strings.Contains(p.JSON, `"Seq Scan"`) {
			t.Errorf("the read of recently abandoned events does not walk job_events_abandoned:\n%s\n%s", p.Query, p.JSON)
		}
	}
}

// The events abandoned before the migration that dates abandonments are
// dated by it: at the end of their last try, else at their creation.
func TestMigrationDatesTheEventsAbandonedBeforeIt(t *testing.T) {
	b := setup(t)
	ctx := context.Background()
	evs := events(t, b.st, b.db, 2)
	tried, untried := evs[0], evs[1]
	started := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	if _, err := b.st.RecordDelivery(ctx, store.DeliveryTry{EventID: tried, Try: 1, URL: "https://acme.example/hook",
		StartedAt: started, Latency: 1500 * time.Millisecond, StatusCode: 410, Error: "gone", Status: store.EventAbandoned}); err != nil {
		t.Fatal(err)
	}
	m := abandonedMigration(t)
	// The schema before the migration, with an event abandoned by hand.
	if _, err := b.db.Pool.Exec(ctx, `DROP TRIGGER job_events_abandoned_at ON job_events; DROP FUNCTION job_event_abandoned();
		DROP INDEX job_events_abandoned; ALTER TABLE job_events DROP COLUMN abandoned_at;
		UPDATE job_events SET status = 'abandoned' WHERE id = '`+untried+`';
		DELETE FROM schema_migrations WHERE version = `+itoa(m.Version)); err != nil {
		t.Fatal(err)
	}
	applied, err := b.st.Migrate(ctx)
	if err != nil {
		t.Fatalf("migrate: %v", err)
	}
	if !slices.Contains(applied, m.Name) {
		t.Fatalf("migrate applied %v; want %s", applied, m.Name)
	}
	if at := abandonedAt(t, b.db, tried); at == nil || !at.Equal(started.Add(1500*time.Millisecond)) {
		t.Errorf("the event abandoned at its try's end %v is dated %v", started.Add(1500*time.Millisecond), at)
	}
	var created time.Time
	if err := b.db.Pool.QueryRow(ctx, `SELECT created_at FROM job_events WHERE id = $1`, untried).Scan(&created); err != nil {
		t.Fatal(err)
	}
	if at := abandonedAt(t, b.db, untried); at == nil || !at.Equal(created) {
		t.Errorf("the event abandoned without a try is dated %v; want its creation %v", at, created)
	}
}
