package api_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/routerhq/router/internal/api"
	"github.com/routerhq/router/internal/providers"
)

// SPEC §17: on SIGTERM the router stops accepting and hands over what
// remains; a replica that is draining starts no attempt. A chat completion
// without an Idempotency-Key that reaches its handler after the signal (its
// body finished arriving during the drain, or it waited on the owner's live
// count) is a new intent this replica will not run: created here, its job is
// run (and paid) by another replica while the caller — an OpenAI SDK, which
// cannot attach to a job without a key — is told at once that the call
// failed (504 still_running, X-Should-Retry: false), with no way to get the
// answer it paid for but GET /v1/jobs. Nothing is lost by refusing it
// before anything is stored (503 with Retry-After, which the SDK resends to a
// live replica behind the balancer): nothing of it has run.
// Found by review (rops13 F1).
func TestKeylessChatAfterDrainIsRefusedBeforeAJobIsStored(t *testing.T) {
	b := setup(t, options{respond: func(int, *providers.Request) providers.Step {
		return providers.Step{Output: validTriage}
	}})
	b.api.Drain()
	b.runner.Drain(0)
	for _, body := range []string{
		`{"model":"default","messages":[{"role":"user","content":"hi"}]}`,
		`{"model":"default","stream":true,"messages":[{"role":"user","content":"hi"}]}`,
	} {
		c := b.do(t, "POST", "/v1/chat/completions", acmeKey, body)
		n := countJobsWdrain61(t, b)
		if n != 0 || c.status != http.StatusServiceUnavailable || !strings.Contains(string(c.raw), `"code":"unavailable"`) ||
			c.header.Get("Retry-After") != "1" || c.header.Get("X-Should-Retry") != "" || c.header.Get("X-Router-Job-Id") != "" {
			t.Errorf("keyless chat completion %s sent to a draining replica: %d Retry-After=%q X-Should-Retry=%q X-Router-Job-Id=%q, %d job(s) stored; "+
				"want it refused before anything is stored (503 unavailable with Retry-After: 1 and no X-Should-Retry: the SDK resends it to a live replica), "+
				"not a job another replica runs and bills while this caller is told its call failed: %s",
				body, c.status, c.header.Get("Retry-After"), c.header.Get("X-Should-Retry"), c.header.Get("X-Router-Job-Id"), n, c.raw)
		}
	}
}

// A keyed chat completion sent after the drain keeps its behaviour: its job
// is stored and handed over, and the 504 still_running (with Retry-After)
// tells the caller to resend with the same key, which attaches to it.
func TestKeyedChatAfterDrainIsStillStoredAndHandedOver(t *testing.T) {
	b := setup(t, options{respond: func(int, *providers.Request) providers.Step {
		return providers.Step{Output: validTriage}
	}})
	b.api.Drain()
	b.runner.Drain(0)
	c := b.do(t, "POST", "/v1/chat/completions", acmeKey, `{"model":"default","messages":[{"role":"user","content":"hi"}]}`,
		"Idempotency-Key", "drained-keyed")
	if n := countJobsWdrain61(t, b); n != 1 || c.status != http.StatusGatewayTimeout || !strings.Contains(string(c.raw), `"code":"still_running"`) ||
		c.header.Get("Retry-After") != "1" || c.header.Get("X-Should-Retry") != "" || c.header.Get("X-Router-Job-Id") == "" {
		t.Errorf("keyed chat completion after the drain: %d Retry-After=%q X-Should-Retry=%q X-Router-Job-Id=%q, %d job(s); "+
			"want its job stored and a 504 still_running with Retry-After: 1 (a resend with the key attaches): %s",
			c.status, c.header.Get("Retry-After"), c.header.Get("X-Should-Retry"), c.header.Get("X-Router-Job-Id"), n, c.raw)
	}
}

// A keyless chat completion whose job existed before the signal is answered
// 504 still_running at the drain with X-Should-Retry: false (a resend would
// be a second job). It carried Retry-After: 1 as well, which a generic client
// or proxy honouring Retry-After on a 5xx takes as leave to resend — a second
// job, paid twice. Found by review (rops13, suspicion 3).
func TestKeylessChatWaitingAtDrainIsNotInvitedToRetry(t *testing.T) {
	arrived, release := make(chan struct{}, 1), make(chan struct{})
	defer close(release)
	b := setup(t, options{respond: func(int, *providers.Request) providers.Step {
		arrived <- struct{}{}
		<-release
		return providers.Step{Output: validTriage}
	}})
	chats := make(chan reply, 1)
	go func() {
		r, err := send(b.srv.URL+"/v1/chat/completions", "POST", acmeKey, `{"model":"default","messages":[{"role":"user","content":"hi"}]}`)
		if err != nil {
			t.Error(err)
		}
		chats <- r
	}()
	<-arrived // the job exists and its attempt is in flight; the caller waits
	b.api.Drain()
	c := <-chats
	if c.status != http.StatusGatewayTimeout || !strings.Contains(string(c.raw), `"code":"still_running"`) ||
		c.header.Get("X-Should-Retry") != "false" || c.header.Get("Retry-After") != "" || c.header.Get("X-Router-Job-Id") == "" {
		t.Fatalf("keyless chat caller waiting at the drain: %d Retry-After=%q X-Should-Retry=%q X-Router-Job-Id=%q; "+
			"want 504 still_running naming the job, X-Should-Retry: false and no Retry-After (a resend is a second job): %s",
			c.status, c.header.Get("Retry-After"), c.header.Get("X-Should-Retry"), c.header.Get("X-Router-Job-Id"), c.raw)
	}
}

// A keyless chat completion that passed its handler's first look at the drain
// and then waited (here on its owner's live-job count, behind a lock held on
// jobs) is looked at again before its job is created: the drain that began
// meanwhile refuses it too, with nothing stored.
func TestKeylessChatThatWaitedIntoTheDrainIsRefused(t *testing.T) {
	b := setup(t, options{ownerLimits: map[string]api.Limits{"acme": {MaxLiveJobs: 100}}})
	ctx := context.Background()
	tx, err := b.db.Pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx) //nolint:errcheck
	var holder int32
	if err := tx.QueryRow(ctx, `SELECT pg_backend_pid()`).Scan(&holder); err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, `LOCK TABLE jobs IN ACCESS EXCLUSIVE MODE`); err != nil {
		t.Fatal(err)
	}
	chats := make(chan reply, 1)
	go func() {
		r, err := send(b.srv.URL+"/v1/chat/completions", "POST", acmeKey, `{"model":"default","messages":[{"role":"user","content":"hi"}]}`)
		if err != nil {
			t.Error(err)
		}
		chats <- r
	}()
	// The count read waits behind the lock: polled from a connection of its
	// own (PostgreSQL has no signal for it).
	conn, err := pgx.Connect(ctx, b.db.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(5 * time.Millisecond) {
		var n int
		if err := conn.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity
			WHERE $1 = ANY(pg_blocking_pids(pid)) AND wait_event_type = 'Lock' AND query LIKE 'SELECT count(*) FROM jobs%'`, holder).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the chat call's live-job count never waited for the lock on jobs")
		}
	}
	b.api.Drain()
	b.runner.Drain(0)
	if err := tx.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	c := <-chats
	if n := countJobsWdrain61(t, b); n != 0 || c.status != http.StatusServiceUnavailable || !strings.Contains(string(c.raw), `"code":"unavailable"`) ||
		c.header.Get("Retry-After") != "1" || c.header.Get("X-Should-Retry") != "" {
		t.Errorf("keyless chat completion that waited into the drain: %d Retry-After=%q X-Should-Retry=%q X-Router-Job-Id=%q, %d job(s) stored; "+
			"want 503 unavailable with Retry-After: 1, no X-Should-Retry, nothing stored: %s",
			c.status, c.header.Get("Retry-After"), c.header.Get("X-Should-Retry"), c.header.Get("X-Router-Job-Id"), n, c.raw)
	}
}

func countJobsWdrain61(t *testing.T, b *bundle) int {
	t.Helper()
	var n int
	if err := b.db.Pool.QueryRow(context.Background(), `SELECT count(*) FROM jobs`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}
