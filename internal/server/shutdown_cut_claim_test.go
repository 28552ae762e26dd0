package server_test

import (
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/routerhq/router/internal/server"
	"github.com/routerhq/router/internal/store"
	"github.com/routerhq/router/internal/testdb"
)

// holdJobInserts makes every insert into the test schema's jobs wait until
// the returned release is called: a claim whose commit is slow for a reason
// no lock wait of the store bounds (a synchronous standby slow to
// acknowledge, a slow disk). The trigger's function waits on an advisory
// lock the test's own session holds, without the claim batch's lock_timeout.
func holdJobInserts(t *testing.T, db *testdb.DB) (holder int, release func()) {
	t.Helper()
	ctx := context.Background()
	const key = `hashtextextended('hold-job-inserts/' || current_schema(), 0)`
	if _, err := db.Pool.Exec(ctx, `CREATE FUNCTION hold_job_insert() RETURNS trigger LANGUAGE plpgsql SET lock_timeout = 0 AS $$
BEGIN
    PERFORM pg_advisory_xact_lock_shared(`+key+`);
    RETURN NEW;
END $$`); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Pool.Exec(ctx, `CREATE TRIGGER hold_job_insert BEFORE INSERT ON jobs FOR EACH ROW EXECUTE FUNCTION hold_job_insert()`); err != nil {
		t.Fatal(err)
	}
	conn, err := db.Pool.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := conn.QueryRow(ctx, `SELECT pg_backend_pid() FROM (SELECT pg_advisory_lock(`+key+`)) l`).Scan(&holder); err != nil {
		conn.Release()
		t.Fatal(err)
	}
	var once sync.Once
	release = func() {
		once.Do(func() {
			defer conn.Release()
			if _, err := conn.Exec(ctx, `SELECT pg_advisory_unlock(`+key+`)`); err != nil {
				t.Error(err)
			}
		})
	}
	t.Cleanup(release)
	return holder, release
}

// SPEC §17: no job becomes unknown because a process was told to stop. A
// POST /v1/jobs still open when shutdown.http runs out is cut, but a claim
// it already sent goes on (store.CreateJob does not give a claim up because
// its caller went away): its job is created a moment later, and the
// handler, whose runner is stopping, hands it over — its first attempt, never
// sent, recorded `cancelled` not_sent and its lease released, so a live
// replica runs it at once. ServeListeners used to return as soon as it had
// cut the request (http.Server's Close does not wait for handlers), and Close
// closed the database: the hand-over then found a closed pool, and the
// attempt stayed `running` under this stopped replica's lease, to become
// `unknown` (lease_expired) — and the job with it — when the lease expired.
func TestShutdownWaitsForACutRequestsClaim(t *testing.T) {
	db := testdb.New(t, store.Options{})
	// Closing the database does not wait for the claim's connection: what
	// matters is whether ServeListeners waited for the handler.
	defer server.SetDBCloseWait(time.Millisecond)()
	llm := newFakeLLM(t)
	close(llm.release)
	srv, err := server.New(context.Background(), newConfig(t, db, llm.srv.URL, "shutdown: {http: 100ms, drain: 2s}"), server.Options{})
	if err != nil {
		t.Fatal(err)
	}
	closed := false
	defer func() {
		if !closed {
			srv.Close()
		}
	}()
	holder, release := holdJobInserts(t, db)
	// Released as ServeListeners starts waiting for the cut handler (the
	// fix), or once Close has returned (without it).
	waiting := make(chan struct{})
	defer server.SetOnAwaitCut(func() { close(waiting) })()

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	opsLn, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, sigterm := context.WithCancel(context.Background())
	defer sigterm()
	served := make(chan error, 1)
	go func() { served <- srv.ServeListeners(ctx, ln, opsLn) }()

	answered := make(chan struct{})
	go func() {
		defer close(answered)
		req, _ := http.NewRequest(http.MethodPost, "http://"+ln.Addr().String()+"/v1/jobs",
			strings.NewReader(`{"prompt":"triage","input":{"subject":"Login","body":"I cannot log in."}}`))
		req.Header.Set("Authorization", "Bearer "+tenantKey)
		req.Header.Set("Idempotency-Key", "cut-claim")
		if resp, err := http.DefaultClient.Do(req); err == nil { // cut: its connection is closed
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
	}()
	// The claim waits in its insert once a session is blocked by the holder.
	for {
		var blocked int
		if err := db.Pool.QueryRow(context.Background(),
			`SELECT count(*) FROM pg_stat_activity WHERE $1 = ANY(pg_blocking_pids(pid))`, holder).Scan(&blocked); err != nil {
			t.Fatal(err)
		}
		if blocked > 0 {
			break
		}
		time.Sleep(10 * time.Millisecond) // polling PostgreSQL, the only place the wait shows
	}

	sigterm()
	var serveErr error
	select {
	case <-waiting:
		release() // the claim commits; the handler hands its job over
		serveErr = <-served
	case serveErr = <-served: // returned with the cut handler still in its claim
	}
	if serveErr != nil {
		t.Fatalf("ServeListeners: %v", serveErr)
	}
	srv.Close()
	closed = true
	release()
	<-answered

	// The claim's job: at once after a fixed shutdown; without the fix it
	// commits once released, after Close.
	var jobID string
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(10 * time.Millisecond) {
		err := db.Pool.QueryRow(context.Background(), `SELECT id::text FROM jobs WHERE idempotency_key = 'cut-claim'`).Scan(&jobID)
		if err == nil {
			break
		}
		if time.Now().After(deadline) { // only to fail rather than hang
			t.Fatalf("no job of the cut request's claim a minute after the holder let it go: %v", err)
		}
	}
	var state, kind string
	var leaseOwner *string
	if err := db.Pool.QueryRow(context.Background(), `SELECT a.state, coalesce(a.error->>'kind', ''), j.lease_owner
		FROM jobs j JOIN attempts a ON a.job_id = j.id WHERE j.id = $1 AND a.seq = 1`, jobID).Scan(&state, &kind, &leaseOwner); err != nil {
		t.Fatal(err)
	}
	if state != store.AttemptCancelled || kind != "not_sent" {
		t.Errorf("the cut request's job's first attempt is %s (kind %q), want cancelled not_sent: the hand-over ran after Close closed the database, "+
			"and the attempt, never sent, becomes unknown (lease_expired) when this stopped replica's lease expires", state, kind)
	}
	if leaseOwner != nil {
		t.Errorf("the cut request's job is still leased to %q after the shutdown: no live replica can adopt it before the lease expires", *leaseOwner)
	}
}
