package server_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/routerhq/router/internal/config"
	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/providers/anthropicfake"
	"github.com/routerhq/router/internal/server"
)

// providers[].max_idle_conns reaches every adapter: with max_idle_conns 1,
// after three concurrent calls (three connections) the adapter keeps one
// idle connection and closes the other two. The anthropic adapter never
// received the setting and kept 256. Found by review.
func TestMaxIdleConnsReachesEveryAdapter(t *testing.T) {
	fake := anthropicfake.New(t, func(anthropicfake.Request) anthropicfake.Reply {
		return anthropicfake.Reply{Text: "ok", InputTokens: 1, OutputTokens: 1}
	})
	const openaiBody = `{"id":"c1","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"ok"},"finish_reason":"stop"}],"usage":{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2}}`
	for _, typ := range []string{"openai", "anthropic"} {
		t.Run(typ, func(t *testing.T) {
			const calls = 3
			var mu sync.Mutex
			arrived := 0
			all := make(chan struct{})
			closed := make(chan struct{}, calls)
			srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				mu.Lock()
				if arrived++; arrived == calls {
					close(all)
				}
				mu.Unlock()
				<-all // three calls in flight at once: three connections
				if typ == "anthropic" {
					fake.Config.Handler.ServeHTTP(w, r)
					return
				}
				w.Header().Set("Content-Type", "application/json")
				fmt.Fprint(w, openaiBody)
			}))
			srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
				if s == http.StateClosed {
					closed <- struct{}{}
				}
			}
			srv.Start()
			defer srv.Close()
			base := srv.URL + "/v1"
			if typ == "anthropic" {
				base = srv.URL
			}
			cfg, err := config.Parse(fmt.Appendf(nil, `database_url: postgres://unused
providers:
  - {name: p, type: %s, base_url: %q, model: m, stream: false, max_retries: 0, max_idle_conns: 1}
routes:
  default: {providers: [p]}
`, typ, base))
			if err != nil {
				t.Fatal(err)
			}
			targets, err := server.BuildTargets(cfg)
			if err != nil {
				t.Fatal(err)
			}
			var wg sync.WaitGroup
			for range calls {
				wg.Go(func() {
					_, err := targets["p"].Provider.Complete(context.Background(), &providers.Request{
						AttemptID: "att", JobID: "job", Model: "m", Messages: []providers.Message{{Role: "user", Content: "hi"}},
					})
					if err != nil {
						t.Error(err)
					}
				})
			}
			wg.Wait()
			// The client closes the connections past max_idle_conns as the
			// calls end: wait (bounded) for the server to see two closes.
			timeout := time.After(10 * time.Second)
			for i := range calls - 1 {
				select {
				case <-closed:
				case <-timeout:
					t.Fatalf("max_idle_conns 1: after %d concurrent calls only %d of the %d surplus connections were closed: the setting did not reach the %s adapter", calls, i, calls-1, typ)
				}
			}
		})
	}
}
