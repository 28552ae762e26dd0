package api_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/routerhq/router/internal/api"
	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/race"
	"github.com/routerhq/router/internal/store"
)

// A waiter (Prefer: wait) whose read of the job waits for a connection of the
// database pool, every one of them in use, ends all the same when its caller
// leaves or on Drain: it no longer waits for the connection. It waited for
// as long as every connection stayed in use (found by review: its reads took
// no cancellation, which covered the pool's Acquire too). A wait that ended
// and whose last read gets no connection answers at once: GET with the job as
// it read it first, POST /v1/jobs 503 busy with Retry-After.
func TestWaitEndsWhilePoolIsExhausted(t *testing.T) {
	for _, c := range []struct {
		name string
		end  func(b *bundle, leave context.CancelFunc)
	}{
		{"caller leaves", func(_ *bundle, leave context.CancelFunc) { leave() }},
		{"drain", func(b *bundle, _ context.CancelFunc) { b.api.Drain() }},
	} {
		t.Run(c.name, func(t *testing.T) {
			pw := newPoolWatch()
			release := make(chan struct{})
			b := setup(t, options{recheck: 100 * time.Millisecond, respond: answerOn(release), tracer: pw})
			t.Cleanup(func() { close(release) }) // before the runner stops, which would wait for the answer
			r := b.create(t, acmeKey, "pool-busy", triageBody("x"))
			if r.status != http.StatusAccepted {
				t.Fatalf("create: %d %s", r.status, r.raw)
			}
			srv, returned := handlerReturns(t, b)
			ctx, leave := context.WithCancel(context.Background())
			defer leave()
			got := make(chan reply, 1)
			go func() { got <- sendCtx(ctx, srv.URL+"/v1/jobs/"+r.job(), "Prefer", "wait=30") }()
			awaitSignal(t, pw.inLoop, "the waiter's first read of the job's state")
			holdPool(t, pw.Pool())
			pw.arm()
			awaitSignal(t, pw.blocked, "the waiter's re-read waiting for a connection")
			c.end(b, leave)
			awaitSignal(t, returned, "the handler to return with every connection of the pool in use")
			if c.name == "drain" {
				r := <-got
				if r.status != http.StatusOK || r.job() != r.header.Get("X-Router-Job-Id") || r.header.Get("Preference-Applied") != "" {
					t.Fatalf("drained wait, job unreadable: %d %v %s; want 200 with the job as first read, without Preference-Applied",
						r.status, r.header, r.raw)
				}
			}
		})
	}
}

// POST /v1/jobs with Prefer: wait answers 503 busy with Retry-After, naming
// the job, when on Drain its job cannot be read because every connection of
// the pool is in use; it waited until one was free.
func TestDrainedCreateWithPoolExhaustedIsBusy(t *testing.T) {
	submitted := make(chan struct{})
	var once sync.Once
	release := make(chan struct{})
	b := setup(t, options{respond: answerOn(release), exec: func(e api.Executor) api.Executor {
		return &submitSignal{Runner: e.(*race.Runner), done: func() { once.Do(func() { close(submitted) }) }}
	}})
	t.Cleanup(func() { close(release) }) // before the runner stops, which would wait for the answer
	srv, returned := handlerReturns(t, b)
	got := make(chan reply, 1)
	go func() {
		got <- sendCtx(context.Background(), srv.URL+"/v1/jobs", "Prefer", "wait=30", "Idempotency-Key", "drained-busy",
			"body", triageBody("x"))
	}()
	awaitSignal(t, submitted, "the job to be created and submitted")
	holdPool(t, b.db.Pool)
	b.api.Drain()
	awaitSignal(t, returned, "the handler to return with every connection of the pool in use")
	r := <-got
	if r.status != http.StatusServiceUnavailable || r.header.Get("Retry-After") != "1" ||
		!strings.Contains(string(r.raw), `problems/busy"`) || r.header.Get("X-Router-Job-Id") == "" ||
		!strings.Contains(string(r.raw), r.header.Get("X-Router-Job-Id")) {
		t.Fatalf("drained create, job unreadable: %d %v %s; want 503 busy with Retry-After 1 naming the job", r.status, r.header, r.raw)
	}
}

// answerOn is a provider that answers once release is closed.
func answerOn(release <-chan struct{}) func(int, *providers.Request) providers.Step {
	return func(int, *providers.Request) providers.Step {
		<-release
		return providers.Step{Output: validTriage}
	}
}

// handlerReturns serves b's API on a server of its own whose handler closes
// returned when it returns (one request).
func handlerReturns(t *testing.T, b *bundle) (*httptest.Server, <-chan struct{}) {
	returned := make(chan struct{})
	var once sync.Once
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer once.Do(func() { close(returned) })
		b.api.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv, returned
}

// sendCtx sends a request as acme on ctx: GET, or POST when hdr holds
// "body"; hdr pairs are header name, value. A failure is a reply with status 0.
func sendCtx(ctx context.Context, url string, hdr ...string) reply {
	method, body := http.MethodGet, ""
	var h []string
	for i := 0; i+1 < len(hdr); i += 2 {
		if hdr[i] == "body" {
			method, body = http.MethodPost, hdr[i+1]
			continue
		}
		h = append(h, hdr[i], hdr[i+1])
	}
	req, err := http.NewRequestWithContext(ctx, method, url, strings.NewReader(body))
	if err != nil {
		return reply{raw: []byte(err.Error())}
	}
	req.Header.Set("Authorization", "Bearer "+acmeKey)
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(h); i += 2 {
		req.Header.Add(h[i], h[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return reply{raw: []byte(err.Error())}
	}
	defer resp.Body.Close()
	var r reply
	r.status, r.header = resp.StatusCode, resp.Header
	r.raw, _ = io.ReadAll(resp.Body)
	_ = json.Unmarshal(r.raw, &r.body)
	return r
}

// holdPool takes every connection pool may hold, until the test ends.
func holdPool(t *testing.T, pool *pgxpool.Pool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute) // a hang guard
	defer cancel()
	var held []*pgxpool.Conn
	t.Cleanup(func() {
		for _, c := range held {
			c.Release()
		}
	})
	for range pool.Config().MaxConns {
		c, err := pool.Acquire(ctx)
		if err != nil {
			t.Fatalf("hold the pool's connections: %v", err)
		}
		held = append(held, c)
	}
}

func awaitSignal(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(30 * time.Second): // a hang guard, not a timing assertion
		t.Fatalf("still waiting for %s after 30 s", what)
	}
}

// submitSignal is the runner, telling when a new job has been handed to it.
type submitSignal struct {
	*race.Runner
	done func()
}

func (s *submitSignal) SubmitNew(job *store.Job, plan store.JobPlan) {
	s.Runner.SubmitNew(job, plan)
	s.done()
}

func (s *submitSignal) SubmitNewContext(ctx context.Context, job *store.Job, plan store.JobPlan) {
	s.Runner.SubmitNewContext(ctx, job, plan)
	s.done()
}

// poolWatch traces the API's pool: inLoop is closed when a request's plain
// read of a job's state (a waiter's) has been sent; blocked, once armed, when
// a request waits for a connection. Arm it once the test holds every
// connection: a request's acquire in progress then waits, whenever it began.
type poolWatch struct {
	mu      sync.Mutex
	pool    *pgxpool.Pool
	armed   bool
	pending int // requests' acquires in progress
	inLoop  chan struct{}
	blocked chan struct{}
	// loopOnce and once close inLoop and blocked.
	loopOnce, once sync.Once
}

func newPoolWatch() *poolWatch {
	return &poolWatch{inLoop: make(chan struct{}), blocked: make(chan struct{})}
}

func (p *poolWatch) Pool() *pgxpool.Pool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.pool
}

func (p *poolWatch) arm() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.armed = true
	p.check()
}

// check closes blocked when armed and a request waits for a connection
// (p.mu held).
func (p *poolWatch) check() {
	if p.armed && p.pending > 0 {
		p.once.Do(func() { close(p.blocked) })
	}
}

// fromRequest says whether ctx is an HTTP request's (or derives from one).
func fromRequest(ctx context.Context) bool { return ctx.Value(http.ServerContextKey) != nil }

func (p *poolWatch) TraceQueryStart(ctx context.Context, _ *pgx.Conn, d pgx.TraceQueryStartData) context.Context {
	if fromRequest(ctx) && strings.HasPrefix(d.SQL, "SELECT state FROM jobs WHERE id = $1 AND owner = $2") {
		p.loopOnce.Do(func() { close(p.inLoop) })
	}
	return ctx
}

func (p *poolWatch) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

func (p *poolWatch) TraceAcquireStart(ctx context.Context, pool *pgxpool.Pool, _ pgxpool.TraceAcquireStartData) context.Context {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.pool = pool
	if fromRequest(ctx) {
		p.pending++
		p.check()
	}
	return ctx
}

func (p *poolWatch) TraceAcquireEnd(ctx context.Context, _ *pgxpool.Pool, _ pgxpool.TraceAcquireEndData) {
	if fromRequest(ctx) {
		p.mu.Lock()
		p.pending--
		p.mu.Unlock()
	}
}
