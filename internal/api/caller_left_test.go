package api_test

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/routerhq/router/internal/api"
	"github.com/routerhq/router/internal/metrics"
	"github.com/routerhq/router/internal/providers"
)

// A caller that hangs up while its request waits for a job (a non-streaming
// chat call, a POST /v1/jobs or GET /v1/jobs/{id} long-poll with Prefer: wait)
// is answered nothing, and counted and logged as 499 (client closed request):
// not as the 504 still_running a chat call would have written to the closed
// connection, which would page an operator for every client-side timeout, nor
// as the 202 or 200 of a long-poll nobody received. The job goes on.
func TestCallerLeavingAWaitIsCounted499(t *testing.T) {
	for _, tc := range []struct {
		name, method, endpoint string
		// path and body of the request the caller leaves; "{id}" is the
		// job's id (a job created beforehand, for GET).
		path, body string
		hdr        []string
	}{
		{name: "chat", method: "POST", endpoint: "POST /v1/chat/completions", path: "/v1/chat/completions",
			body: `{"model":"default","messages":[{"role":"user","content":"hi"}]}`, hdr: []string{"Idempotency-Key", "leaves-chat"}},
		{name: "create with wait", method: "POST", endpoint: "POST /v1/jobs", path: "/v1/jobs",
			body: triageBody("leaves"), hdr: []string{"Idempotency-Key", "leaves-job", "Prefer", "wait=60"}},
		{name: "get with wait", method: "GET", endpoint: "GET /v1/jobs/{id}", path: "/v1/jobs/{id}",
			hdr: []string{"Prefer", "wait=60"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			const requestID = "caller-leaves-1"
			called := make(chan struct{}, 1)
			release := make(chan struct{})
			defer close(release)
			m := metrics.New(metrics.Options{NoProcessCollectors: true})
			logs := &lockedBuffer{}
			waiting := &statementOfRequest{id: requestID, ran: make(chan struct{})}
			b := setup(t, options{counters: m, logs: logs, tracer: waiting, respond: func(int, *providers.Request) providers.Step {
				select {
				case called <- struct{}{}:
				default:
				}
				<-release
				return providers.Step{Output: validTriage}
			}})
			path, inRequest := tc.path, called
			if strings.Contains(path, "{id}") {
				job := b.create(t, acmeKey, "leaves-get", triageBody("leaves"), "Prefer", "wait=0")
				if job.status != http.StatusAccepted {
					t.Fatalf("create: %d %s", job.status, job.raw)
				}
				path = strings.ReplaceAll(path, "{id}", job.job())
				<-called
				// The GET waits once it has read the job: its first
				// statement (the job's state, to wait on) says so.
				inRequest = nil
			}

			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			req, err := http.NewRequestWithContext(ctx, tc.method, b.srv.URL+path, strings.NewReader(tc.body))
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Authorization", "Bearer "+acmeKey)
			req.Header.Set(api.RequestIDHeader, requestID)
			for i := 0; i+1 < len(tc.hdr); i += 2 {
				req.Header.Set(tc.hdr[i], tc.hdr[i+1])
			}
			done := make(chan error, 1)
			go func() {
				resp, err := http.DefaultClient.Do(req)
				if err == nil {
					resp.Body.Close()
				}
				done <- err
			}()
			if inRequest != nil {
				<-inRequest // the job runs: the request waits for it
			} else {
				<-waiting.ran
			}
			cancel() // the caller hangs up
			if err := <-done; err == nil {
				t.Fatal("the request was answered although its caller had left")
			}
			b.srv.Close() // returns once every request has been served: the one left is counted

			counts, _ := requestCounts(t, m)
			if n := counts[tc.method+" | "+tc.endpoint+" | 499"]; n != 1 {
				t.Errorf("%s whose caller left is not counted once as 499: %v", tc.endpoint, counts)
			}
			for series, n := range counts {
				if strings.HasPrefix(series, tc.method+" | "+tc.endpoint+" | ") && !strings.HasSuffix(series, " | 499") && n > 0 {
					t.Errorf("%s whose caller left is also counted as %q", tc.endpoint, series)
				}
			}
			var line string
			for _, l := range strings.Split(logs.String(), "\n") {
				if strings.Contains(l, "request_id="+requestID) && strings.Contains(l, "msg=http ") {
					line = l
				}
			}
			if !strings.Contains(line, "status=499") {
				t.Errorf("access-log line of the request whose caller left: %q, want status=499", line)
			}
			if n := b.count(t, `SELECT count(*) FROM jobs WHERE state = 'running'`); n != 1 {
				t.Errorf("running jobs after the caller left = %d, want 1: the job goes on", n)
			}
		})
	}
}

// statementOfRequest closes ran once a statement sent for the request whose
// X-Request-Id is id has run.
type statementOfRequest struct {
	id   string
	once sync.Once
	ran  chan struct{}
}

func (s *statementOfRequest) TraceQueryStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceQueryStartData) context.Context {
	return ctx
}

func (s *statementOfRequest) TraceQueryEnd(ctx context.Context, _ *pgx.Conn, data pgx.TraceQueryEndData) {
	if api.RequestID(ctx) == s.id && data.Err == nil {
		s.once.Do(func() { close(s.ran) })
	}
}
