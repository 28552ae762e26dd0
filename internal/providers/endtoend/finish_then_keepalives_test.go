package endtoend_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/race"
)

// A provider whose stream has ended its answer (finish_reason "stop") but
// sends neither a usage chunk nor [DONE], only SSE keep-alive comments, until
// the attempt's timeout. docs/providers.md: "An OpenAI-compatible stream's
// answer is complete at its finish_reason"; the same stream falling silent
// instead is returned whole (stream_idle_timeout after the finish_reason), and
// so is one whose usage chunk came ("keep-alives until the attempt's
// timeout ... returns the answer as it stands").
func TestFinishThenKeepAlivesUntilTimeout(t *testing.T) {
	for _, keepAlive := range []bool{false, true} {
		t.Run(fmt.Sprintf("keepalives=%v", keepAlive), func(t *testing.T) { finishThen(t, keepAlive) })
	}
}

func finishThen(t *testing.T, keepAlive bool) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		fmt.Fprint(w, `data: {"id":"g","object":"chat.completion.chunk","created":1,"model":"gpt-test","choices":[{"index":0,"delta":{"role":"assistant","content":"the whole answer"},"finish_reason":null}]}`+"\n\n")
		fmt.Fprint(w, `data: {"id":"g","object":"chat.completion.chunk","created":1,"model":"gpt-test","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`+"\n\n")
		w.(http.Flusher).Flush()
		for {
			select {
			case <-r.Context().Done():
				return
			case <-time.After(50 * time.Millisecond):
				if !keepAlive {
					continue
				}
				fmt.Fprint(w, ": keep-alive\n\n")
				w.(http.Flusher).Flush()
			}
		}
	}))
	t.Cleanup(srv.Close)
	p, err := providers.NewOpenAI(providers.OpenAIConfig{Name: "gw", BaseURL: srv.URL, APIKey: "sk-test", Model: "gpt-test", Stream: true,
		Timeout: time.Second, StreamIdleTimeout: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	target := &race.Target{Provider: p, Model: "gpt-test", ContextWindow: 128000, Timeout: time.Second, Stream: true}
	api, _ := serve(t, map[string]*race.Target{"gw": target}, "gw")
	_, body := streamChat(t, api.URL)
	if !strings.Contains(body, "the whole answer") || !strings.Contains(body, "data: [DONE]") {
		t.Fatalf("the answer whole at its finish_reason was discarded:\n%s", body)
	}
}
