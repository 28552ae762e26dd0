package api_test

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/routerhq/router/internal/providers"
)

// slowFinalRead is a pgx tracer that, once armed, takes the API's first read
// of a whole job (store.GetJob: the owner-checked job batch, the last read of
// a chat call's wait) as the moment to call onRead, and holds that read for
// hold (well within the wait's finalReadWait of 3 s).
type slowFinalRead struct {
	armed  atomic.Bool
	fired  atomic.Bool
	hold   time.Duration
	onRead func()
}

var (
	_ pgx.QueryTracer = (*slowFinalRead)(nil)
	_ pgx.BatchTracer = (*slowFinalRead)(nil)
)

func (s *slowFinalRead) TraceQueryStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceQueryStartData) context.Context {
	return ctx
}
func (s *slowFinalRead) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}
func (s *slowFinalRead) TraceBatchStart(ctx context.Context, _ *pgx.Conn, d pgx.TraceBatchStartData) context.Context {
	if !s.armed.Load() {
		return ctx
	}
	for _, q := range d.Batch.QueuedQueries {
		// The API's GetJob checks the owner ($2 true); the runner's
		// GetJobAny does not.
		if strings.Contains(q.SQL, "FROM jobs j WHERE j.id = $1 AND (NOT $2 OR j.owner = $3)") && len(q.Arguments) == 3 && q.Arguments[1] == true {
			if s.fired.CompareAndSwap(false, true) {
				s.onRead()
				time.Sleep(s.hold)
			}
			break
		}
	}
	return ctx
}
func (s *slowFinalRead) TraceBatchQuery(context.Context, *pgx.Conn, pgx.TraceBatchQueryData) {}
func (s *slowFinalRead) TraceBatchEnd(context.Context, *pgx.Conn, pgx.TraceBatchEndData)     {}

// SPEC §17 / docs/chat.md: on Drain a waiting chat caller is answered "with
// the job as it stands". A streamed call whose job has already succeeded —
// its wait saw the win and is reading the job back (a job that failed over
// is not announced whole, so it is read) — when Drain comes is answered with
// the job as the request found it at its start: a still_running error event
// ("this router replica is shutting down and the job … is still running"),
// although the job has its answer and no replica will run it again. The
// unstreamed call in the same moment waits for that read (up to 3 s) and
// answers 200 with the completion; the streamed one must too.
// Found by review (rstream13; rstream10 suspicion 3).
func TestStreamDrainedWhileItsWinIsReadGetsTheAnswer(t *testing.T) {
	tr := &slowFinalRead{hold: 1500 * time.Millisecond}
	var b *bundle
	tr.onRead = func() { b.api.Drain() }
	b = setup(t, options{
		tracer: tr,
		respond: func(int, *providers.Request) providers.Step {
			return providers.Step{Status: 500} // the primary fails: the job fails over
		},
		fallback: func(int, *providers.Request) providers.Step {
			tr.armed.Store(true) // the next read of the whole job is the wait's last
			return providers.Step{Output: "the whole answer"}
		},
	})
	r := b.do(t, "POST", "/v1/chat/completions", acmeKey,
		`{"model":"default","messages":[{"role":"user","content":"hi"}],"stream":true}`, "Idempotency-Key", "drain-after-win")
	if !tr.fired.Load() {
		t.Fatalf("the wait's final read was never seen; stream: %s", r.raw)
	}
	job := r.header.Get("X-Router-Job-Id")
	var state string
	if err := b.db.Pool.QueryRow(context.Background(), `SELECT state FROM jobs WHERE id = $1`, job).Scan(&state); err != nil {
		t.Fatal(err)
	}
	if state != "succeeded" {
		t.Fatalf("setup: job %s is %s, want succeeded", job, state)
	}
	if !strings.Contains(string(r.raw), "the whole answer") || !strings.Contains(string(r.raw), "data: [DONE]") {
		t.Fatalf("job %s had succeeded when Drain came, but the streamed caller was answered:\n%s", job, r.raw)
	}
}

// The control: the same moment for the unstreamed call, which is answered
// 200 with the completion (its wait's last read is not cut by Drain).
func TestPlainDrainedWhileItsWinIsReadGetsTheAnswer(t *testing.T) {
	tr := &slowFinalRead{hold: 1500 * time.Millisecond}
	var b *bundle
	tr.onRead = func() { b.api.Drain() }
	b = setup(t, options{
		tracer: tr,
		respond: func(int, *providers.Request) providers.Step {
			return providers.Step{Status: 500}
		},
		fallback: func(int, *providers.Request) providers.Step {
			tr.armed.Store(true)
			return providers.Step{Output: "the whole answer"}
		},
	})
	r := b.do(t, "POST", "/v1/chat/completions", acmeKey,
		`{"model":"default","messages":[{"role":"user","content":"hi"}]}`, "Idempotency-Key", "drain-after-win-plain")
	if !tr.fired.Load() {
		t.Fatalf("the wait's final read was never seen; answer: %d %s", r.status, r.raw)
	}
	if r.status != 200 || !strings.Contains(string(r.raw), "the whole answer") {
		t.Fatalf("unstreamed: %d %s", r.status, r.raw)
	}
}
