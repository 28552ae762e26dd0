package api_test

// A router whose one target is the real OpenAI adapter (providers.NewOpenAI,
// streaming as `router serve` configures it by default) in front of a fake
// OpenAI-compatible upstream (httptest), for tests that check what reaches
// the provider's wire.

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/routerhq/router/internal/api"
	"github.com/routerhq/router/internal/prompt"
	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/race"
	"github.com/routerhq/router/internal/store"
	"github.com/routerhq/router/internal/testdb"
)

// fakeUpstream is a fake OpenAI-compatible server: answer writes the
// response to each request (body decoded), and the bodies are kept.
type fakeUpstream struct {
	mu     sync.Mutex
	bodies []map[string]any
	answer func(w http.ResponseWriter, body map[string]any)
}

func (u *fakeUpstream) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	raw, _ := io.ReadAll(r.Body)
	var m map[string]any
	_ = json.Unmarshal(raw, &m)
	u.mu.Lock()
	u.bodies = append(u.bodies, m)
	u.mu.Unlock()
	u.answer(w, m)
}

func (u *fakeUpstream) requests() []map[string]any {
	u.mu.Lock()
	defer u.mu.Unlock()
	return append([]map[string]any(nil), u.bodies...)
}

// upstreamSSE writes each event as `data: <event>` and then [DONE].
func upstreamSSE(w http.ResponseWriter, events ...string) {
	w.Header().Set("Content-Type", "text/event-stream")
	for _, e := range events {
		_, _ = io.WriteString(w, "data: "+e+"\n\n")
	}
	_, _ = io.WriteString(w, "data: [DONE]\n\n")
}

// upstreamChunk is one chat.completion.chunk of the fake upstream's stream:
// delta (a JSON object) and finish ("" for null).
func upstreamChunk(delta string, finish string) string {
	f := "null"
	if finish != "" {
		f = `"` + finish + `"`
	}
	return `{"id":"chatcmpl-up","object":"chat.completion.chunk","created":1741569952,"model":"gpt-4o-2024-08-06","system_fingerprint":"fp_x","choices":[{"index":0,"delta":` + delta + `,"logprobs":null,"finish_reason":` + f + `}]}`
}

type openAIUpstreamRig struct {
	srv      *httptest.Server
	upstream *fakeUpstream
}

// setupOpenAIUpstream is the router (route "default", acmeKey's owner acme)
// over a fake upstream that answers with answer; each mod changes the
// adapter's configuration.
func setupOpenAIUpstream(t *testing.T, answer func(w http.ResponseWriter, body map[string]any), mods ...func(*providers.OpenAIConfig)) *openAIUpstreamRig {
	t.Helper()
	db := testdb.New(t, store.Options{})
	prompts, err := prompt.LoadDir("../../prompts")
	if err != nil {
		t.Fatal(err)
	}
	up := &fakeUpstream{answer: answer}
	upSrv := httptest.NewServer(up)
	t.Cleanup(upSrv.Close)
	cfg := providers.OpenAIConfig{Name: "openai", BaseURL: upSrv.URL + "/v1", APIKey: "sk-up", Model: "gpt-4o", Timeout: time.Minute, Stream: true}
	for _, mod := range mods {
		mod(&cfg)
	}
	p, err := providers.NewOpenAI(cfg)
	if err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	listener := store.NewListener(db.Pool, log)
	listener.SkipNotificationsOf(db.Store)
	ctx, cancel := context.WithCancel(context.Background())
	go listener.Run(ctx)
	<-listener.Ready()
	targets := map[string]*race.Target{"openai": {Provider: p, Model: "gpt-4o", ContextWindow: 128000, Timeout: time.Minute, Stream: true}}
	route := &race.Route{Providers: []string{"openai"}, MaxInflight: 1, MaxAttempts: 1}
	runner := race.New(race.Config{Store: db.Store, Listener: listener, Prompts: prompts, LeaseOwner: "test", Log: log,
		Targets: targets, Routes: map[string]*race.Route{"default": route}})
	apiSrv := api.New(api.Config{LeaseOwner: "test", Lease: 30 * time.Second}, api.Deps{
		Store: db.Store, Listener: listener, Prompts: prompts, Routes: map[string]bool{"default": true}, Models: map[string]string{},
		Exec: runner, Log: log, Auth: &api.KeyAuth{Static: map[string]string{acmeKey: "acme"}, Store: db.Store},
	})
	srv := httptest.NewServer(apiSrv)
	t.Cleanup(func() {
		srv.Close()
		stopCtx, stop := context.WithTimeout(context.Background(), 10*time.Second)
		defer stop()
		runner.Stop(stopCtx)
		cancel()
	})
	return &openAIUpstreamRig{srv: srv, upstream: up}
}
