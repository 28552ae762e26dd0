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
)

// A caller that hangs up while the router's first statement for its request
// is on its way (here the owner's live-job count) is
// answered nothing and counted and logged as 499, like one that leaves a
// wait: the statement failed because the caller left, not because the
// router or its database did, so no 500 or 503 pages an operator (and no
// error-level line is logged). Found by review.
func TestCallerLeavingDuringAStatementIsCounted499(t *testing.T) {
	for _, tc := range []struct {
		name, endpoint, path, body string
		hdr                        []string
	}{
		{name: "chat", endpoint: "POST /v1/chat/completions", path: "/v1/chat/completions",
			body: `{"model":"default","messages":[{"role":"user","content":"hi"}]}`, hdr: []string{"Idempotency-Key", "leaves-early-chat"}},
		{name: "jobs", endpoint: "POST /v1/jobs", path: "/v1/jobs",
			body: triageBody("leaves"), hdr: []string{"Idempotency-Key", "leaves-early-job"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			const requestID = "caller-leaves-early-1"
			m := metrics.New(metrics.Options{NoProcessCollectors: true})
			logs := &lockedBuffer{}
			blocked := &blockStatementOfRequest{id: requestID, started: make(chan struct{})}
			// With a live-job limit, the request's first statement is the owner's
			// live count.
			b := setup(t, options{counters: m, logs: logs, tracer: blocked, limits: api.Limits{MaxLiveJobs: 100}})

			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			req, err := http.NewRequestWithContext(ctx, "POST", b.srv.URL+tc.path, strings.NewReader(tc.body))
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
			<-blocked.started // the request's first statement waits for the caller to leave
			cancel()          // the caller hangs up
			if err := <-done; err == nil {
				t.Fatal("the request was answered although its caller had left")
			}
			b.srv.Close() // returns once every request has been served

			counts, _ := requestCounts(t, m)
			if n := counts["POST | "+tc.endpoint+" | 499"]; n != 1 {
				t.Errorf("%s whose caller left during a statement is not counted once as 499: %v", tc.endpoint, counts)
			}
			for series, n := range counts {
				if strings.HasPrefix(series, "POST | "+tc.endpoint+" | ") && !strings.HasSuffix(series, " | 499") && n > 0 {
					t.Errorf("%s whose caller left is also counted as %q", tc.endpoint, series)
				}
			}
			for _, l := range strings.Split(logs.String(), "\n") {
				if strings.Contains(l, "level=ERROR") {
					t.Errorf("a caller leaving is logged as an error: %s", l)
				}
			}
		})
	}
}

// blockStatementOfRequest holds the first statement sent for the request
// whose X-Request-Id is id until that request's context ends, then lets it
// go on (to fail, as a statement whose caller left does).
type blockStatementOfRequest struct {
	id      string
	once    sync.Once
	started chan struct{}
}

func (s *blockStatementOfRequest) TraceQueryStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceQueryStartData) context.Context {
	if api.RequestID(ctx) != s.id {
		return ctx
	}
	first := false
	s.once.Do(func() { first = true; close(s.started) })
	if first {
		<-ctx.Done()
	}
	return ctx
}

func (s *blockStatementOfRequest) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}
