package api_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/routerhq/router/internal/api"
	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/race"
	"github.com/routerhq/router/internal/store"
)

// Issue 11: wins notify only jobs a waiter watches. A duplicate request
// waiting on another replica (a second API server with its own store and
// listener, paired as router serve pairs them, on the same database) watches
// the job and is answered with it, won, as soon as the job's own replica
// wins it: it waits up to a minute and never re-reads the job on its own, so
// only the win's notification can wake it within the test's bound.
func TestWaiterOnAnotherReplicaIsToldOfTheWin(t *testing.T) {
	release := make(chan struct{})
	b := setup(t, options{respond: func(int, *providers.Request) providers.Step {
		<-release
		return providers.Step{Output: validTriage}
	}})
	released := false
	defer func() {
		if !released {
			close(release)
		}
	}()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	st := store.New(b.db.Pool, store.Options{})
	l := store.NewListener(b.db.Pool, nil)
	l.SkipNotificationsOf(st)
	go l.Run(ctx)
	<-l.Ready()
	idle := providers.NewScripted(providers.ScriptedConfig{Name: "primary", Model: "m1",
		Respond: func(int, *providers.Request) providers.Step { return providers.Step{Output: validTriage} }})
	runner := race.New(race.Config{Store: st, Listener: l, Prompts: b.prompts, LeaseOwner: "other",
		Targets: map[string]*race.Target{"primary": {Provider: idle, Model: "m1", ContextWindow: 128000, Timeout: time.Minute}},
		Routes:  map[string]*race.Route{"default": {Providers: []string{"primary"}, MaxInflight: 2, MaxAttempts: 4}}})
	defer func() {
		stopCtx, stop := context.WithTimeout(context.Background(), 10*time.Second)
		defer stop()
		runner.Stop(stopCtx)
	}()
	other := httptest.NewServer(api.New(api.Config{RecheckEvery: time.Hour}, api.Deps{Store: st, Listener: l, Prompts: b.prompts,
		Routes: map[string]bool{"default": true}, Exec: runner,
		Auth: &api.KeyAuth{Static: map[string]string{acmeKey: "acme"}, Store: st}}))
	defer other.Close()

	body := triageBody("watched elsewhere")
	first := b.create(t, acmeKey, "watch-1", body, "Prefer", "wait=0")
	if first.status != http.StatusAccepted || first.job() == "" {
		t.Fatalf("first request: %d %s", first.status, first.raw)
	}
	type answer struct {
		reply
		err error
	}
	answered := make(chan answer, 1)
	go func() {
		r, err := send(other.URL+"/v1/jobs", "POST", acmeKey, body, "Idempotency-Key", "watch-1", "Prefer", "wait=60")
		answered <- answer{r, err}
	}()
	// The duplicate is waiting once it has flagged the job.
	for deadline := time.Now().Add(10 * time.Second); ; {
		if b.count(t, `SELECT count(*) FROM jobs WHERE id = $1 AND watched`, first.job()) == 1 {
			break
		}
		select {
		case a := <-answered:
			t.Fatalf("the other replica answered before the win: %d %s %v", a.status, a.raw, a.err)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatal("the waiter on the other replica never watched the job")
		}
		time.Sleep(5 * time.Millisecond)
	}
	close(release)
	released = true
	var a answer
	select {
	case a = <-answered:
	case <-time.After(30 * time.Second):
		t.Fatal("the waiter on the other replica was not told of the win")
	}
	if a.err != nil {
		t.Fatal(a.err)
	}
	if idle.Calls() != 0 {
		t.Fatalf("the other replica called its provider %d times for a job it did not run", idle.Calls())
	}
	if a.job() != first.job() || a.body["state"] != store.JobSucceeded {
		t.Fatalf("the other replica answered %d %s; want job %s succeeded", a.status, a.raw, first.job())
	}
}

// A waiter re-reads its job every RecheckEvery, so a change it was not told of
// (here the job settled by SQL that announces nothing) reaches it long before
// its wait of a minute ends. The job runs on the waiter's own replica, so the
// waiter does not watch it (its win is announced in memory).
func TestWaiterRereadsAJobItWasNotToldOf(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	reads := recheckSignal{reads: make(chan struct{}, 1)}
	b := setup(t, options{recheck: 10 * time.Millisecond, tracer: reads, respond: func(int, *providers.Request) providers.Step {
		<-release
		return providers.Step{Output: validTriage}
	}})
	created := b.create(t, acmeKey, "silent-1", triageBody("settled in silence"), "Prefer", "wait=0")
	if created.status != http.StatusAccepted {
		t.Fatalf("create: %d %s", created.status, created.raw)
	}
	answered := make(chan reply, 1)
	go func() {
		r, err := send(b.srv.URL+"/v1/jobs/"+created.job(), "GET", acmeKey, "", "Prefer", "wait=60")
		if err != nil {
			r.raw = []byte(err.Error())
		}
		answered <- r
	}()
	for range 3 { // the waiter is waiting once it re-reads
		select {
		case <-reads.reads:
		case <-time.After(30 * time.Second):
			t.Fatal("the waiter never re-read the job")
		}
	}
	if n := b.count(t, `SELECT count(*) FROM jobs WHERE id = $1 AND watched`, created.job()); n != 0 {
		t.Fatal("a waiter watched a job its own replica runs: its win would notify")
	}
	if _, err := b.db.Pool.Exec(context.Background(), `UPDATE jobs SET state = 'failed', error = 'settled by hand',
		version = version + 1, finished_at = now(), lease_owner = NULL, lease_expires_at = NULL WHERE id = $1`, created.job()); err != nil {
		t.Fatal(err)
	}
	select {
	case r := <-answered:
		if r.status != http.StatusOK || r.body["state"] != store.JobFailed {
			t.Fatalf("the waiter answered %d %s; want the job failed", r.status, r.raw)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the waiter did not re-read a job whose change nobody announced")
	}
}

var _ interface{ Runs(string) bool } = (*race.Runner)(nil) // api asks it (runsHere)

// recheckSignal is a pgx tracer that signals each read of a job's state by a
// waiter: Store.JobState, or Store.WatchJob's update.
type recheckSignal struct{ reads chan struct{} }

func (r recheckSignal) TraceQueryStart(ctx context.Context, _ *pgx.Conn, d pgx.TraceQueryStartData) context.Context {
	if sql := strings.TrimSpace(d.SQL); strings.HasPrefix(sql, "SELECT state FROM jobs WHERE id = $1 AND owner = $2") ||
		strings.HasPrefix(sql, "UPDATE jobs SET watched") {
		select {
		case r.reads <- struct{}{}:
		default:
		}
	}
	return ctx
}
func (recheckSignal) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

// A caller waiting for the job its own request created re-reads it while the
// provider call takes long, but does not watch it (the job runs on this
// replica, whose runner announces the win in memory): a slow provider call
// must not make the win notify, and so take NOTIFY's database-wide lock.
func TestFreshWaiterRereadsWithoutWatching(t *testing.T) {
	release := make(chan struct{})
	reads := recheckSignal{reads: make(chan struct{}, 1)}
	b := setup(t, options{recheck: 10 * time.Millisecond, tracer: reads, respond: func(int, *providers.Request) providers.Step {
		<-release
		return providers.Step{Output: validTriage}
	}})
	answered := make(chan reply, 1)
	go func() {
		r, err := send(b.srv.URL+"/v1/jobs", "POST", acmeKey, triageBody("slow provider"), "Idempotency-Key", "fresh-1", "Prefer", "wait=60")
		if err != nil {
			r.raw = []byte(err.Error())
		}
		answered <- r
	}()
	for range 3 { // three re-reads while the provider has not answered
		select {
		case <-reads.reads:
		case <-time.After(30 * time.Second):
			close(release)
			t.Fatal("the waiter never re-read its job")
		}
	}
	if n := b.count(t, `SELECT count(*) FROM jobs WHERE idempotency_key = 'fresh-1' AND watched`); n != 0 {
		close(release)
		t.Fatal("the waiter of its own fresh job watched it: its win would notify")
	}
	close(release)
	r := <-answered
	if r.status != http.StatusCreated || r.body["state"] != store.JobSucceeded {
		t.Fatalf("answer %d %s; want the job created and succeeded", r.status, r.raw)
	}
}
