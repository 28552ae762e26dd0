package api_test

import (
	"bytes"
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/routerhq/router/internal/providers"
)

// statements records the round trips made through a pool (a pgx tracer):
// each Query, QueryRow and Exec, and each batch (its statements joined).
type statements struct {
	mu  sync.Mutex
	sql []string
}

var (
	_ pgx.QueryTracer = (*statements)(nil)
	_ pgx.BatchTracer = (*statements)(nil)
)

func (s *statements) add(sql string) {
	s.mu.Lock()
	s.sql = append(s.sql, strings.Join(strings.Fields(sql), " "))
	s.mu.Unlock()
}

func (s *statements) TraceQueryStart(ctx context.Context, _ *pgx.Conn, d pgx.TraceQueryStartData) context.Context {
	s.add(d.SQL)
	return ctx
}
func (s *statements) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}
func (s *statements) TraceBatchStart(ctx context.Context, _ *pgx.Conn, d pgx.TraceBatchStartData) context.Context {
	var sqls []string
	for _, q := range d.Batch.QueuedQueries {
		sqls = append(sqls, q.SQL)
	}
	s.add(strings.Join(sqls, "; "))
	return ctx
}
func (s *statements) TraceBatchQuery(context.Context, *pgx.Conn, pgx.TraceBatchQueryData) {}
func (s *statements) TraceBatchEnd(context.Context, *pgx.Conn, pgx.TraceBatchEndData)     {}

// since returns the statements recorded after the first n.
func (s *statements) since(n int) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.sql[n:]...)
}

func (s *statements) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.sql)
}

func short(sqls []string) []string {
	out := make([]string, len(sqls))
	for i, q := range sqls {
		out[i] = q[:min(len(q), 150)]
	}
	return out
}

// Issue 11: a job whose only attempt wins on this replica is answered from
// the win itself — two round trips for the whole request (the batched claim
// and the batched win), no read of the job afterwards — and the answer is
// exactly what reading the job gives.
func TestWaitedJobIsAnsweredFromItsWin(t *testing.T) {
	sts := &statements{}
	b := setup(t, options{tracer: sts})
	// A first job prepares the statements on the pool's connection.
	if rep := b.create(t, acmeKey, "answer-warm", triageBody("warm"), "Prefer", "wait=10"); rep.status != 201 {
		t.Fatalf("warm-up: status %d: %s", rep.status, rep.raw)
	}
	n := sts.count()
	rep := b.create(t, acmeKey, "answer-1", triageBody("answer"), "Prefer", "wait=10")
	if rep.status != 201 || rep.body["state"] != "succeeded" {
		t.Fatalf("status %d: %s", rep.status, rep.raw)
	}
	if got := sts.since(n); len(got) != 2 {
		t.Fatalf("the request made %d round trips, want 2 (claim, win):\n%s", len(got), strings.Join(short(got), "\n"))
	}
	get := b.do(t, "GET", "/v1/jobs/"+rep.job(), acmeKey, "")
	if get.status != 200 {
		t.Fatalf("GET: status %d: %s", get.status, get.raw)
	}
	if !reflect.DeepEqual(rep.body, get.body) {
		t.Fatalf("the answer differs from the job as read:\nanswer: %s\nread:   %s", rep.raw, get.raw)
	}
	attempts, _ := rep.body["attempts"].([]any)
	if len(attempts) != 1 || attempts[0].(map[string]any)["state"] != "won" || rep.body["result"] == nil {
		t.Fatalf("want one won attempt and a result: %s", rep.raw)
	}
}

// The same for the chat endpoint: one claim, one win.
func TestWaitedChatIsAnsweredFromItsWin(t *testing.T) {
	sts := &statements{}
	b := setup(t, options{tracer: sts})
	body := `{"model":"default","messages":[{"role":"user","content":"hi"}]}`
	if rep := b.do(t, "POST", "/v1/chat/completions", acmeKey, body, "Idempotency-Key", "chat-warm"); rep.status != 200 {
		t.Fatalf("warm-up: status %d: %s", rep.status, rep.raw)
	}
	n := sts.count()
	rep := b.do(t, "POST", "/v1/chat/completions", acmeKey, body, "Idempotency-Key", "chat-1")
	if rep.status != 200 {
		t.Fatalf("status %d: %s", rep.status, rep.raw)
	}
	if got := sts.since(n); len(got) != 2 {
		t.Fatalf("the request made %d round trips, want 2 (claim, win):\n%s", len(got), strings.Join(short(got), "\n"))
	}
}

// A job with more than one attempt is read back: the answer shows every
// attempt, not only the winner.
func TestHedgedJobAnswerShowsEveryAttempt(t *testing.T) {
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	b := setup(t, options{
		hedgeAfter: 10 * time.Millisecond,
		respond:    func(int, *providers.Request) providers.Step { return providers.Step{Hang: true} },
		fallback:   func(int, *providers.Request) providers.Step { return providers.Step{Output: validTriage} },
	})
	rep := b.create(t, acmeKey, "hedged-1", triageBody("hedged"), "Prefer", "wait=10")
	if rep.status != 201 || rep.body["state"] != "succeeded" {
		t.Fatalf("status %d: %s", rep.status, rep.raw)
	}
	var job struct {
		Attempts []struct{ Provider, State string } `json:"attempts"`
	}
	if err := json.Unmarshal(rep.raw, &job); err != nil {
		t.Fatal(err)
	}
	if len(job.Attempts) != 2 {
		t.Fatalf("want both attempts (primary, hedge) in the answer: %s", rep.raw)
	}
}

// lockedBuffer is a bytes.Buffer safe for the router's goroutines and the test.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// One line per request at info level — the access log, naming the job — and
// the job's own lifecycle lines at debug: a router serving thousands of jobs
// a second does not write three lines for each.
func TestOneInfoLinePerJobRequest(t *testing.T) {
	logs := &lockedBuffer{}
	b := setup(t, options{logs: logs})
	rep := b.create(t, acmeKey, "log-1", triageBody("log"), "Prefer", "wait=10")
	if rep.status != 201 || rep.header.Get("X-Router-Job-Id") != rep.job() {
		t.Fatalf("status %d, X-Router-Job-Id %q: %s", rep.status, rep.header.Get("X-Router-Job-Id"), rep.raw)
	}
	var lines []string
	for _, l := range strings.Split(strings.TrimSpace(logs.String()), "\n") {
		if strings.Contains(l, rep.job()) {
			lines = append(lines, l)
		}
	}
	if len(lines) != 1 || !strings.Contains(lines[0], `msg=http`) || !strings.Contains(lines[0], "job_id="+rep.job()) ||
		!strings.Contains(lines[0], "owner=acme") {
		t.Fatalf("want one access log line naming the job and its owner, got:\n%s", strings.Join(lines, "\n"))
	}
}
