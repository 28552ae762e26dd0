package api_test

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/routerhq/router/internal/providers"
)

// failRead fails owner acme's reads of one job (store.GetJob: a read-only
// snapshot batch naming the job and its owner) once armed, after letting
// skip of them through: the read is sent with a context whose deadline has
// passed, as a database that does not answer in time would fail it.
type failRead struct {
	mu     sync.Mutex
	id     string
	skip   int
	failed int
}

func (f *failRead) arm(id string, skip int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.id, f.skip = id, skip
}

func (f *failRead) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.failed
}

func (f *failRead) TraceBatchStart(ctx context.Context, _ *pgx.Conn, data pgx.TraceBatchStartData) context.Context {
	if data.Batch == nil || len(data.Batch.QueuedQueries) < 2 ||
		!strings.Contains(data.Batch.QueuedQueries[0].SQL, "REPEATABLE READ READ ONLY") {
		return ctx
	}
	args := data.Batch.QueuedQueries[1].Arguments
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.id == "" || !slices.Contains(args, any(f.id)) || !slices.Contains(args, any("acme")) {
		return ctx
	}
	if f.skip > 0 {
		f.skip--
		return ctx
	}
	f.id = ""
	f.failed++
	past, cancel := context.WithDeadline(ctx, time.Now().Add(-time.Second))
	cancel() // its error stays DeadlineExceeded
	return past
}

func (f *failRead) TraceBatchQuery(context.Context, *pgx.Conn, pgx.TraceBatchQueryData) {}
func (f *failRead) TraceBatchEnd(context.Context, *pgx.Conn, pgx.TraceBatchEndData)     {}
func (f *failRead) TraceQueryStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceQueryStartData) context.Context {
	return ctx
}
func (f *failRead) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

// A resent retry (its Idempotency-Key that of the job's latest retry) whose
// read of the job fails answers a problem without Idempotent-Replayed —
// the header marks an answer carrying the job — saying that the retry was
// made and to read the job, not to send the request again. Found by review.
func TestReplayedRetryFinalReadFails(t *testing.T) {
	fr := &failRead{}
	b := setup(t, options{respond: refused, tracer: fr})
	id := failedJob(t, b, "replay-unread")
	if r := b.do(t, "POST", "/v1/jobs/"+id+"/retry", acmeKey, "", "Idempotency-Key", "retry-once", "Prefer", "wait=10"); r.status != http.StatusOK || r.body["state"] != "failed" {
		t.Fatalf("first retry: %d %s; want 200, failed again", r.status, r.raw)
	}
	fr.arm(id, 0)
	r := b.do(t, "POST", "/v1/jobs/"+id+"/retry", acmeKey, "", "Idempotency-Key", "retry-once")
	if fr.count() != 1 {
		t.Fatalf("the resend's read of the job was not failed (%d failed): %d %s", fr.count(), r.status, r.raw)
	}
	detail, _ := r.body["detail"].(string)
	if r.status != http.StatusServiceUnavailable || r.header.Get("Idempotent-Replayed") != "" {
		t.Fatalf("resent retry whose read of the job failed: %d (Idempotent-Replayed %q) %s; want 503 without Idempotent-Replayed",
			r.status, r.header.Get("Idempotent-Replayed"), r.raw)
	}
	if !strings.Contains(detail, "already retried") || !strings.Contains(detail, "GET /v1/jobs/"+id) || strings.Contains(detail, "retry with the same") {
		t.Errorf("detail does not say the retry was made and to read the job: %q", detail)
	}
	if r := b.do(t, "GET", "/v1/jobs/"+id, acmeKey, ""); r.status != http.StatusOK {
		t.Fatalf("the job, read as told: %d %s", r.status, r.raw)
	}
}

// A resolution that was made but whose read of the job afterwards failed
// says that the attempt was resolved and to read the job, not to retry the
// request (a second resolution is a 409). Found by review.
func TestResolvedFinalReadFails(t *testing.T) {
	fr := &failRead{}
	b := setup(t, options{
		tracer:   fr,
		timeout:  50 * time.Millisecond,
		respond:  func(int, *providers.Request) providers.Step { return providers.Step{Hang: true} },
		fallback: func(int, *providers.Request) providers.Step { return providers.Step{Output: validTriage} },
	})
	first := b.create(t, acmeKey, "resolve-unread", triageBody("hang"), "Prefer", "wait=30")
	if first.status != http.StatusAccepted || first.body["state"] != "unknown" {
		t.Fatalf("precondition: %d %s; want the job unknown", first.status, first.raw)
	}
	id := first.job()
	fr.arm(id, 1) // the resolution's own read of the job first, then its answer's
	r := b.do(t, "POST", "/v1/jobs/"+id+"/attempts/1/resolve", acmeKey, `{"outcome":"succeeded","result":`+validTriage+`}`)
	if fr.count() != 1 {
		t.Fatalf("the resolution's final read was not failed: %d %s", r.status, r.raw)
	}
	detail, _ := r.body["detail"].(string)
	if r.status != http.StatusServiceUnavailable || !strings.Contains(detail, "attempt 1 was resolved as succeeded") ||
		!strings.Contains(detail, "GET /v1/jobs/"+id) || strings.Contains(detail, "retry the request") {
		t.Fatalf("resolution whose read of the job failed: %d %s", r.status, r.raw)
	}
	if n := b.count(t, `SELECT count(*) FROM jobs WHERE id = $1 AND state = 'succeeded'`, id); n != 1 {
		t.Fatalf("the job is not succeeded after the resolution, as the answer says it was resolved")
	}
}
