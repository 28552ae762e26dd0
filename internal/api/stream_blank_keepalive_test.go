package api_test

import (
	"context"
	"errors"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/routerhq/router/internal/api"
	"github.com/routerhq/router/internal/providers"
)

// keepAliveWatch serves b's API through a writer that records the keep-alives
// of the stream it answers (every write that is not a "data:" event) and
// closes sent once `after` of them have been written. The stream's writes come
// from one goroutine, so each recorded keep-alive is on the wire before any
// event written after sent is closed.
type keepAliveWatch struct {
	after int
	sent  chan struct{}
	mu    sync.Mutex
	seen  []string
}

func newKeepAliveWatch(after int) *keepAliveWatch {
	return &keepAliveWatch{after: after, sent: make(chan struct{})}
}

func (k *keepAliveWatch) serve(t *testing.T, h http.Handler) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.ServeHTTP(&keepAliveWriter{ResponseWriter: w, k: k}, r)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// keepAlives returns the keep-alives written so far.
func (k *keepAliveWatch) keepAlives() []string {
	k.mu.Lock()
	defer k.mu.Unlock()
	return append([]string(nil), k.seen...)
}

type keepAliveWriter struct {
	http.ResponseWriter
	k *keepAliveWatch
}

func (w *keepAliveWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

func (w *keepAliveWriter) Write(b []byte) (int, error) {
	n, err := w.ResponseWriter.Write(b)
	if err == nil && !strings.HasPrefix(string(b), "data:") {
		w.k.mu.Lock()
		w.k.seen = append(w.k.seen, string(b))
		if len(w.k.seen) == w.k.after {
			close(w.k.sent)
		}
		w.k.mu.Unlock()
	}
	return n, err
}

// goOpenAI is a go-openai client of srv. Its limit of lines without data in
// a stream (300 by default: about 45 minutes of blank keep-alives at the
// default interval) is lifted: the tests send keep-alives every few
// milliseconds, and how long the job takes is not what they check.
func goOpenAI(srv *httptest.Server) *openai.Client {
	cfg := openai.DefaultConfig(acmeKey)
	cfg.BaseURL = srv.URL + "/v1"
	cfg.EmptyMessagesLimit = math.MaxUint32
	return openai.NewClientWithConfig(cfg)
}

// With chat.keepalive: blank, the keep-alives of a stream are bare blank lines,
// and go-openai reads the error event of a stream whose job did not succeed,
// sent after keep-alives, as the *openai.APIError it is: upstream_failed for a
// job that failed, outcome_unknown for one whose provider never answered. (It
// gathers a stream's non-data lines into the error event's body, so after a
// keep-alive comment it reports a JSON syntax error instead.) The provider
// answers only once three keep-alives have been written.
func TestGoOpenAIReadsStreamErrorAfterBlankKeepAlives(t *testing.T) {
	for _, tc := range []struct {
		name, code string
		timeout    time.Duration
		step       providers.Step
	}{
		{"failed", "upstream_failed", 0, providers.Step{Status: 500}},
		{"outcome unknown", "outcome_unknown", 50 * time.Millisecond, providers.Step{Hang: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			watch := newKeepAliveWatch(3)
			b := setup(t, options{keepAlive: 5 * time.Millisecond, timeout: tc.timeout,
				respond: func(int, *providers.Request) providers.Step {
					<-watch.sent
					return tc.step
				}})
			api.SetBlankKeepAlive(b.api)
			req := chatReq("stream " + tc.name)
			req.Stream = true
			stream, err := goOpenAI(watch.serve(t, b.api)).CreateChatCompletionStream(context.Background(), req)
			if err != nil {
				t.Fatal(err)
			}
			defer stream.Close()
			_, err = stream.Recv()
			var apiErr *openai.APIError
			if !errors.As(err, &apiErr) || apiErr.Code != tc.code {
				t.Fatalf("go-openai read %v (%T), want an *openai.APIError with code %s", err, err, tc.code)
			}
			kas := watch.keepAlives()
			if len(kas) < 3 {
				t.Fatalf("%d keep-alives before the error event, want 3 or more", len(kas))
			}
			for _, ka := range kas {
				if ka != "\n" {
					t.Fatalf("keep-alives %q, want each a bare blank line", kas)
				}
			}
		})
	}
}

// Left out, chat.keepalive is the SSE comment line SPEC §15 asks for.
func TestStreamKeepAliveIsACommentByDefault(t *testing.T) {
	watch := newKeepAliveWatch(2)
	b := setup(t, options{keepAlive: time.Millisecond, respond: func(int, *providers.Request) providers.Step {
		<-watch.sent
		return providers.Step{Output: "an answer"}
	}})
	srv := watch.serve(t, b.api)
	r, err := send(srv.URL+"/v1/chat/completions", http.MethodPost, acmeKey,
		`{"model":"default","stream":true,"messages":[{"role":"user","content":"hi"}]}`)
	if err != nil {
		t.Fatal(err)
	}
	if r.status != http.StatusOK || !strings.HasSuffix(string(r.raw), "data: [DONE]\n\n") {
		t.Fatalf("stream: %d %s", r.status, r.raw)
	}
	kas := watch.keepAlives()
	for _, ka := range kas {
		if ka != ": waiting for a valid answer\n\n" {
			t.Fatalf("keep-alives %q, want each the SSE comment line", kas)
		}
	}
	if !strings.HasPrefix(string(r.raw), ": waiting for a valid answer\n\n") {
		t.Fatalf("the stream %q does not begin with the keep-alive comment", r.raw)
	}
}
