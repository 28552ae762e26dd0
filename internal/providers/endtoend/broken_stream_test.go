package endtoend_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/routerhq/router/internal/api"
	"github.com/routerhq/router/internal/prompt"
	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/race"
	"github.com/routerhq/router/internal/store"
	"github.com/routerhq/router/internal/testdb"
)

const callerKey = "key-acme"

// openAIStream serves an OpenAI-compatible streamed answer of the given
// chunks (data lines, without "data: ").
func openAIStream(t *testing.T, chunks ...string) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		for _, c := range chunks {
			fmt.Fprintf(w, "data: %s\n\n", c)
		}
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

func openAITarget(t *testing.T, name, url string) *race.Target {
	t.Helper()
	p, err := providers.NewOpenAI(providers.OpenAIConfig{Name: name, BaseURL: url, APIKey: "sk-test", Model: "gpt-test", Stream: true})
	if err != nil {
		t.Fatal(err)
	}
	return &race.Target{Provider: p, Model: "gpt-test", ContextWindow: 128000, Timeout: 30 * time.Second, Stream: true}
}

// serve runs the chat API with one route, "default", over targets (tried in
// the order of order), on a database of its own.
func serve(t *testing.T, targets map[string]*race.Target, order ...string) (*httptest.Server, *testdb.DB) {
	t.Helper()
	db := testdb.New(t, store.Options{})
	prompts, err := prompt.LoadDir("../../../prompts")
	if err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	listener := store.NewListener(db.Pool, log)
	listener.SkipNotificationsOf(db.Store)
	ctx, cancel := context.WithCancel(context.Background())
	go listener.Run(ctx)
	<-listener.Ready()
	runner := race.New(race.Config{
		Store: db.Store, Listener: listener, Prompts: prompts, LeaseOwner: "test", Log: log,
		Targets: targets,
		Routes:  map[string]*race.Route{"default": {Providers: order, MaxInflight: 1, MaxAttempts: 4}},
	})
	srv := httptest.NewServer(api.New(api.Config{LeaseOwner: "test", Lease: 30 * time.Second}, api.Deps{
		Store: db.Store, Listener: listener, Prompts: prompts, Routes: map[string]bool{"default": true},
		Exec: runner, Log: log, Auth: &api.KeyAuth{Static: map[string]string{callerKey: "acme"}, Store: db.Store},
	}))
	t.Cleanup(func() {
		srv.Close()
		c, stop := context.WithTimeout(context.Background(), 10*time.Second)
		defer stop()
		runner.Stop(c)
		cancel()
	})
	return srv, db
}

// streamChat asks for a streamed chat completion and returns the job's id
// and the whole SSE body.
func streamChat(t *testing.T, url string) (job, body string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url+"/v1/chat/completions",
		strings.NewReader(`{"model":"default","stream":true,"messages":[{"role":"user","content":"how do I fix my router?"}]}`))
	req.Header.Set("Authorization", "Bearer "+callerKey)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.Header.Get("X-Router-Job-Id"), string(b)
}

const cutText = "Step 1: unplug the router. Step 2: wa"

// brokenOff is how OpenRouter (with its "error" object), Mistral ("error")
// and vLLM ("abort") end a stream whose generation broke off upstream.
var brokenOff = map[string][]string{
	"openrouter": {
		`{"id":"gen-1","object":"chat.completion.chunk","created":1,"model":"gpt-test","choices":[{"index":0,"delta":{"role":"assistant","content":"` + cutText + `"},"finish_reason":null}]}`,
		`{"id":"gen-1","object":"chat.completion.chunk","created":1,"model":"gpt-test","error":{"code":502,"message":"Provider disconnected unexpectedly"},"choices":[{"index":0,"delta":{"content":""},"finish_reason":"error"}],"usage":{"prompt_tokens":10,"completion_tokens":12,"total_tokens":22}}`,
		"[DONE]",
	},
	"mistral": {
		`{"id":"gen-1","object":"chat.completion.chunk","created":1,"model":"gpt-test","choices":[{"index":0,"delta":{"role":"assistant","content":"` + cutText + `"},"finish_reason":null}]}`,
		`{"id":"gen-1","object":"chat.completion.chunk","created":1,"model":"gpt-test","choices":[{"index":0,"delta":{"content":""},"finish_reason":"error"}],"usage":{"prompt_tokens":10,"completion_tokens":12,"total_tokens":22}}`,
		"[DONE]",
	},
	"vllm": {
		`{"id":"gen-1","object":"chat.completion.chunk","created":1,"model":"gpt-test","choices":[{"index":0,"delta":{"role":"assistant","content":"` + cutText + `"},"finish_reason":null}]}`,
		`{"id":"gen-1","object":"chat.completion.chunk","created":1,"model":"gpt-test","choices":[{"index":0,"delta":{"content":""},"finish_reason":"abort"}],"usage":{"prompt_tokens":10,"completion_tokens":12,"total_tokens":22}}`,
		"[DONE]",
	},
}

// SPEC §4.3: a caller never receives a truncated answer presented as
// success. A provider stream that ended with finish_reason "error" or
// "abort" won the job: its cut text was streamed to the caller with
// [DONE], stored and replayed. Now the attempt fails as a known outcome with
// the usage the provider billed, and the job fails over to the next target,
// whose whole answer the caller gets. Found by review.
func TestBrokenOffStreamFailsOverToAWholeAnswer(t *testing.T) {
	for name, chunks := range brokenOff {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			whole := openAIStream(t,
				`{"id":"gen-2","object":"chat.completion.chunk","created":1,"model":"gpt-test","choices":[{"index":0,"delta":{"role":"assistant","content":"Unplug it, wait ten seconds, plug it back in."},"finish_reason":"stop"}]}`,
				"[DONE]")
			srv, db := serve(t, map[string]*race.Target{
				"broken": openAITarget(t, "broken", openAIStream(t, chunks...)),
				"whole":  openAITarget(t, "whole", whole),
			}, "broken", "whole")
			job, body := streamChat(t, srv.URL)
			if strings.Contains(body, "unplug the router") || !strings.Contains(body, "wait ten seconds") || !strings.Contains(body, "data: [DONE]") {
				t.Fatalf("the caller did not get the whole answer alone:\n%s", body)
			}
			var state string
			var usage, errDoc json.RawMessage
			if err := db.Pool.QueryRow(context.Background(),
				`SELECT state, usage, error FROM attempts WHERE job_id = $1 AND provider = 'broken'`, job).Scan(&state, &usage, &errDoc); err != nil {
				t.Fatal(err)
			}
			var u providers.Usage
			if err := json.Unmarshal(usage, &u); err != nil || u.TotalTokens != 22 {
				t.Errorf("the broken attempt's usage is %s, want the 22 tokens the provider billed", usage)
			}
			if state != "failed" {
				t.Errorf("the broken attempt is %s, want failed (error %s)", state, errDoc)
			}
		})
	}
}

// With no other target, the job fails: the caller's stream ends with an
// error event, never with the cut text and [DONE].
func TestBrokenOffStreamIsNeverTheAnswer(t *testing.T) {
	srv, _ := serve(t, map[string]*race.Target{"broken": openAITarget(t, "broken", openAIStream(t, brokenOff["openrouter"]...))}, "broken")
	_, body := streamChat(t, srv.URL)
	if strings.Contains(body, "unplug the router") || strings.Contains(body, "data: [DONE]") || !strings.Contains(body, `"error"`) {
		t.Fatalf("a stream that broke off reached the caller as an answer:\n%s", body)
	}
}
