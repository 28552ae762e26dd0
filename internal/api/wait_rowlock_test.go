package api_test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/routerhq/router/internal/api"
	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/store"
)

// remoteExec is the runner without its Runs: the API takes every job it did
// not just create for a job another replica runs, so its waiters watch it
// (Store.WatchJob's update of the job's row).
type remoteExec struct{ api.Executor }

// rowHolder holds a job's row in an open transaction on a connection of its
// own, as an operator's psql session or a replica cut off mid-transaction
// would, and counts the watch updates it blocks.
type rowHolder struct {
	conn *pgx.Conn
	tx   pgx.Tx
}

func holdJobRow(t *testing.T, b *bundle, id string) *rowHolder {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, b.db.URL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	tx, err := conn.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, `SELECT 1 FROM jobs WHERE id = $1 FOR UPDATE`, id); err != nil {
		t.Fatal(err)
	}
	h := &rowHolder{conn: conn, tx: tx}
	t.Cleanup(h.release)
	return h
}

func (h *rowHolder) release() { _ = h.tx.Rollback(context.Background()) }

// blockedWatches counts the statements waiting behind the held row that are
// a waiter's watch update, from a connection of their own (not the router's
// pool, which they may have exhausted).
func (h *rowHolder) blockedWatches(t *testing.T, b *bundle) int {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, b.db.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var n int
	// The first update waits for the holder, the others for the row's
	// tuple lock the first holds: every session behind the holder.
	if err := conn.QueryRow(ctx, `WITH RECURSIVE behind(pid) AS (
			SELECT pid FROM pg_stat_activity WHERE $1 = ANY(pg_blocking_pids(pid))
			UNION SELECT a.pid FROM pg_stat_activity a JOIN behind b ON b.pid = ANY(pg_blocking_pids(a.pid)))
		SELECT count(*) FROM pg_stat_activity
		WHERE pid IN (SELECT pid FROM behind) AND wait_event_type = 'Lock' AND query LIKE 'UPDATE jobs SET watched%'`,
		int32(h.conn.PgConn().PID())).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// awaitBlocked waits until want watch updates wait for the held row (a
// minute catches a hang).
func (h *rowHolder) awaitBlocked(t *testing.T, b *bundle, want int) {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); h.blockedWatches(t, b) != want; {
		if time.Now().After(deadline) {
			t.Fatalf("the held row never had %d watch updates waiting for it (%d now)", want, h.blockedWatches(t, b))
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// rowLockBundle is a router whose jobs run "on another replica" and never
// settle (their provider call hangs until the test ends), with one such job.
func rowLockBundle(t *testing.T) (*bundle, string) {
	t.Helper()
	release := make(chan struct{})
	b := setup(t, options{
		exec: func(e api.Executor) api.Executor { return remoteExec{e} },
		respond: func(int, *providers.Request) providers.Step {
			<-release
			return providers.Step{Output: validTriage}
		},
	})
	t.Cleanup(func() { close(release) }) // before setup's cleanup stops the runner
	r := b.create(t, acmeKey, "held-row", triageBody("held row"), "Prefer", "wait=0")
	if r.status != http.StatusAccepted || r.job() == "" {
		t.Fatalf("create: %d %s", r.status, r.raw)
	}
	return b, r.job()
}

func unsettledAnswer(t *testing.T, who string, r reply, err error) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", who, err)
	}
	if st, _ := r.body["state"].(string); r.status != http.StatusOK || (st != store.JobPending && st != store.JobRunning) {
		t.Fatalf("%s: %d %s; want the job as it stands (200, unsettled)", who, r.status, r.raw)
	}
}

type answer struct {
	reply
	err error
}

// A waiter for a job another replica runs, whose row another transaction
// holds, is answered with the job as it stands when its wait ends: its watch
// update waits for the row no longer than the wait.
func TestWaiterOnAHeldJobRowIsAnsweredAtItsDeadline(t *testing.T) {
	b, id := rowLockBundle(t)
	holdJobRow(t, b, id)
	answered := make(chan answer, 1)
	go func() {
		r, err := send(b.srv.URL+"/v1/jobs/"+id, "GET", acmeKey, "", "Prefer", "wait=1")
		answered <- answer{r, err}
	}()
	select {
	case a := <-answered:
		unsettledAnswer(t, "GET with Prefer: wait=1", a.reply, a.err)
	case <-time.After(time.Minute):
		t.Fatal("a one-second wait for a job whose row is held was not answered: its watch update waits for the row")
	}
}

// SPEC §17: Drain answers a caller waiting on a job whose row another
// transaction holds, at once, with the job as it stands.
func TestDrainAnswersAWaiterOnAHeldJobRow(t *testing.T) {
	b, id := rowLockBundle(t)
	h := holdJobRow(t, b, id)
	answered := make(chan answer, 1)
	go func() {
		r, err := send(b.srv.URL+"/v1/jobs/"+id, "GET", acmeKey, "", "Prefer", "wait=60")
		answered <- answer{r, err}
	}()
	h.awaitBlocked(t, b, 1) // the waiter's watch waits for the row
	b.api.Drain()
	select {
	case a := <-answered:
		unsettledAnswer(t, "GET with Prefer: wait=60 after Drain", a.reply, a.err)
	case <-time.After(time.Minute):
		t.Fatal("Drain did not answer a waiter whose watch update waits for a held row")
	}
}

// A streamed chat completion attaching to a job whose row another
// transaction holds ends on Drain with the job as it stands (a still_running
// event), rather than sending keep-alive comments for as long as the row is
// held.
func TestDrainEndsAStreamWaitingOnAHeldJobRow(t *testing.T) {
	release := make(chan struct{})
	b := setup(t, options{
		exec: func(e api.Executor) api.Executor { return remoteExec{e} },
		respond: func(int, *providers.Request) providers.Step {
			<-release
			return providers.Step{Output: "hello"}
		},
	})
	t.Cleanup(func() { close(release) })
	body := `{"model":"default","stream":true,"messages":[{"role":"user","content":"hi"}]}`
	stream := func(ctx context.Context) (*http.Response, error) {
		req, err := http.NewRequestWithContext(ctx, "POST", b.srv.URL+"/v1/chat/completions", strings.NewReader(body))
		if err != nil {
			return nil, err
		}
		req.Header.Set("Authorization", "Bearer "+acmeKey)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Idempotency-Key", "held-stream")
		return http.DefaultClient.Do(req)
	}
	// The first call creates the job and leaves once its headers are in.
	ctx, leave := context.WithCancel(context.Background())
	first, err := stream(ctx)
	if err != nil {
		t.Fatal(err)
	}
	id := first.Header.Get("X-Router-Job-Id")
	leave()
	first.Body.Close()
	if first.StatusCode != http.StatusOK || id == "" {
		t.Fatalf("first stream: %d %v", first.StatusCode, first.Header)
	}
	h := holdJobRow(t, b, id)
	// The second attaches to it and waits.
	answered := make(chan answer, 1)
	go func() {
		resp, err := stream(context.Background())
		if err != nil {
			answered <- answer{err: err}
			return
		}
		defer resp.Body.Close()
		raw, err := io.ReadAll(resp.Body)
		answered <- answer{reply{status: resp.StatusCode, header: resp.Header, raw: raw}, err}
	}()
	h.awaitBlocked(t, b, 1)
	b.api.Drain()
	select {
	case a := <-answered:
		if a.err != nil || a.status != http.StatusOK || a.header.Get("Idempotent-Replayed") != "true" ||
			!strings.Contains(string(a.raw), `"code":"still_running"`) {
			t.Fatalf("the attached stream after Drain: %d %v %s %v", a.status, a.header, a.raw, a.err)
		}
	case <-time.After(time.Minute):
		t.Fatal("Drain did not end a stream whose wait's watch update waits for a held row")
	}
}

// Callers that leave while their watch updates wait for a held row take
// their updates with them: none is left waiting for the row (each holding a
// connection of the pool, which twenty such waiters would exhaust for every
// owner), and the router still answers.
func TestCallersThatLeftLeaveNoWatchWaitingForAHeldRow(t *testing.T) {
	b, id := rowLockBundle(t)
	h := holdJobRow(t, b, id)
	const callers = 4
	ctx, leave := context.WithCancel(context.Background())
	done := make(chan error, callers)
	for range callers {
		go func() {
			req, err := http.NewRequestWithContext(ctx, "GET", b.srv.URL+"/v1/jobs/"+id, nil)
			if err != nil {
				done <- err
				return
			}
			req.Header.Set("Authorization", "Bearer "+acmeKey)
			req.Header.Set("Prefer", "wait=60")
			resp, err := http.DefaultClient.Do(req)
			if err == nil {
				resp.Body.Close()
			}
			done <- err
		}()
	}
	h.awaitBlocked(t, b, callers) // every caller's watch waits for the row
	leave()
	for range callers {
		<-done
	}
	h.awaitBlocked(t, b, 0)
	// The row is still held, and the router answers.
	if r := b.do(t, "GET", "/v1/jobs/"+id, acmeKey, ""); r.status != http.StatusOK {
		t.Fatalf("GET without a wait: %d %s", r.status, r.raw)
	}
}
