package webhook_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/routerhq/router/internal/metrics"
	"github.com/routerhq/router/internal/store"
	"github.com/routerhq/router/internal/testdb"
	"github.com/routerhq/router/internal/webhook"
)

// lockedWriter serialises writes of the delivery workers' log lines.
type lockedWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (l lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// countedTries is the router's delivery counter (metrics.Webhooks), telling
// the test of each outcome once it is counted — and logged: the worker logs a
// try before it counts it.
type countedTries struct {
	*metrics.Webhooks
	told chan string
}

func (c countedTries) DeliveryTry(outcome string) {
	c.Webhooks.DeliveryTry(outcome)
	c.told <- outcome
}

// visibleEnv is a delivery service for acme's webhook at url whose log lines
// (info and above, JSON) and counted outcomes the test reads.
type visibleEnv struct {
	*env
	counter countedTries
	mu      sync.Mutex
	logs    bytes.Buffer
}

func newVisibleEnv(t *testing.T, url string) *visibleEnv {
	t.Helper()
	v := &visibleEnv{counter: countedTries{Webhooks: metrics.NewWebhooks(), told: make(chan string, 100)}}
	log := slog.New(slog.NewJSONHandler(lockedWriter{&v.mu, &v.logs}, &slog.HandlerOptions{Level: slog.LevelInfo}))
	db := testdb.New(t, store.Options{KeyRetention: time.Hour})
	if err := db.Store.SyncConfigWebhooks(context.Background(), map[string]string{"acme": url}); err != nil {
		t.Fatal(err)
	}
	v.env = &env{db: db, st: db.Store, svc: newServiceOf(t, db, webhook.ServiceConfig{
		Config: webhook.Config{Timeout: 5 * time.Second, Secrets: map[string]string{"acme": secret}},
		Log:    log, Observer: v.counter,
	})}
	return v
}

// outcome waits for the next counted try.
func (v *visibleEnv) outcome(t *testing.T) string {
	t.Helper()
	select {
	case o := <-v.counter.told:
		return o
	case <-time.After(30 * time.Second):
		t.Fatal("no delivery try counted within 30s")
		return ""
	}
}

// text is the log so far.
func (v *visibleEnv) text() string {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.logs.String()
}

// lines are the log lines whose msg contains msg, decoded.
func (v *visibleEnv) lines(t *testing.T, msg string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for l := range strings.Lines(v.text()) {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("log line %q: %v", l, err)
		}
		if s, _ := m["msg"].(string); strings.Contains(s, msg) {
			out = append(out, m)
		}
	}
	return out
}

// deliveries reads router_webhook_deliveries_total by outcome, as /metrics
// would: through a registry that checks the collector.
func (v *visibleEnv) deliveries(t *testing.T) map[string]float64 {
	t.Helper()
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(v.counter.Webhooks)
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for _, mf := range mfs {
		if mf.GetName() != "router_webhook_deliveries_total" {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "outcome" {
					got[l.GetValue()] = m.GetCounter().GetValue()
				}
			}
		}
	}
	return got
}

// An event abandoned after its last try failed says so at warn, naming the
// event, its job, the owner, the answer's status and the error, and counts as
// router_webhook_deliveries_total{outcome="abandoned"}: River logs its job's
// cancellation at debug only, so nothing at info or above showed that the
// router gave up on an event.
func TestAbandonedEventIsLoggedAtWarnAndCounted(t *testing.T) {
	rc := newReceiver(t, func(int) int { return http.StatusInternalServerError })
	v := newVisibleEnv(t, rc.srv.URL)
	j := v.cancel(t, "acme", "k1")
	var id string
	if err := v.db.Pool.QueryRow(context.Background(), `UPDATE job_events SET created_at = now() - interval '25 hours'
		WHERE job_id = $1 RETURNING id::text`, j.ID).Scan(&id); err != nil {
		t.Fatal(err)
	}
	v.start(t)
	if o := v.outcome(t); o != webhook.OutcomeAbandoned {
		t.Fatalf("the try was counted %q, want %q", o, webhook.OutcomeAbandoned)
	}
	v.waitStatus(t, "acme", j.ID, store.EventAbandoned, 1)
	lines := v.lines(t, "abandoned")
	if len(lines) != 1 {
		t.Fatalf("%d log lines say the event was abandoned, want 1:\n%s", len(lines), v.text())
	}
	l := lines[0]
	if l["level"] != "WARN" || l["event_id"] != id || l["job_id"] != j.ID || l["owner"] != "acme" ||
		l["status"] != float64(500) || l["error"] != "the webhook answered 500" || l["river_job_id"] == nil {
		t.Fatalf("the abandonment's log line: %v", l)
	}
	if strings.Contains(v.text(), rc.srv.URL) {
		t.Fatalf("the log quotes the webhook URL:\n%s", v.text())
	}
	if got := v.deliveries(t); len(got) != 3 || got["abandoned"] != 1 || got["failed"] != 0 || got["delivered"] != 0 {
		t.Fatalf("router_webhook_deliveries_total: %v, want abandoned 1, failed and delivered 0", got)
	}
}

// A failed try that will be retried is logged at info and counted as failed;
// the try that then delivers the event is counted as delivered and not
// logged.
func TestFailedTryIsLoggedAtInfoAndCounted(t *testing.T) {
	rc := newReceiver(t, func(n int) int {
		if n == 1 {
			return http.StatusServiceUnavailable
		}
		return http.StatusNoContent
	})
	v := newVisibleEnv(t, rc.srv.URL)
	j := v.cancel(t, "acme", "k1")
	v.start(t)
	if o := v.outcome(t); o != webhook.OutcomeFailed {
		t.Fatalf("the first try was counted %q, want %q", o, webhook.OutcomeFailed)
	}
	if o := v.outcome(t); o != webhook.OutcomeDelivered {
		t.Fatalf("the second try was counted %q, want %q", o, webhook.OutcomeDelivered)
	}
	v.waitStatus(t, "acme", j.ID, store.EventDelivered, 2)
	lines := v.lines(t, "webhook delivery try failed")
	if len(lines) != 1 || lines[0]["level"] != "INFO" || lines[0]["job_id"] != j.ID || lines[0]["status"] != float64(503) || lines[0]["try"] != float64(1) {
		t.Fatalf("the failed try's log lines: %v\nall:\n%s", lines, v.text())
	}
	if n := len(v.lines(t, "abandoned")); n != 0 {
		t.Fatalf("%d lines say abandoned:\n%s", n, v.text())
	}
	if got := v.deliveries(t); got["failed"] != 1 || got["delivered"] != 1 || got["abandoned"] != 0 {
		t.Fatalf("router_webhook_deliveries_total: %v, want failed 1, delivered 1", got)
	}
}

// An event abandoned because no replica had its webhook's signing secret
// records why, not the failed try's "will be retried".
func TestAbandonedForWantOfTheSecretSaysSo(t *testing.T) {
	rc := newReceiver(t, func(int) int { return http.StatusOK })
	e := setup(t, rc.srv.URL, 5*time.Second)
	ctx := context.Background()
	j := e.cancel(t, "acme", "k1")
	var id string
	if err := e.db.Pool.QueryRow(ctx, `UPDATE job_events SET created_at = now() - interval '25 hours'
		WHERE job_id = $1 RETURNING id::text`, j.ID).Scan(&id); err != nil {
		t.Fatal(err)
	}
	w := webhook.NewWorker(e.st, webhook.Config{Timeout: 5 * time.Second}) // no secret on this replica
	err := w.Work(ctx, &river.Job[webhook.DeliverArgs]{JobRow: &rivertype.JobRow{Attempt: 1, MaxAttempts: 10000}, Args: webhook.DeliverArgs{EventID: id}})
	var cancelled *rivertype.JobCancelError
	if !errors.As(err, &cancelled) {
		t.Fatalf("want give-up, got %v", err)
	}
	ev := e.waitStatus(t, "acme", j.ID, store.EventAbandoned, 1)
	const want = "abandoned: the event is older than webhooks.retry_for (24h0m0s), and the replica of its last try had no signing secret " +
		"for the owner's webhook (set the environment variable named by api_keys[].webhook.secret_env on every replica)"
	if ev.LastError == nil || *ev.LastError != want {
		t.Fatalf("the abandoned event's last_error: %v, want %q", ev.LastError, want)
	}
	if strings.Contains(err.Error(), "will be retried") {
		t.Fatalf("River's record of the give-up says it will be retried: %v", err)
	}
	select {
	case r := <-rc.got:
		t.Fatalf("a replica without the secret sent the event: %s", r.body)
	default:
	}
}
