package race_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/race"
	"github.com/routerhq/router/internal/racetest"
	"github.com/routerhq/router/internal/store"
)

// A whole answer (finish_reason "stop" on an empty delta) from a server that
// ignores include_usage and holds the connection open is held by the adapter
// for up to stream_idle_timeout, waiting for the usage chunk; the job's
// deadline passing meanwhile failed the job ("cut by the job's deadline after
// the provider began answering") although its complete answer came long
// before the deadline. It succeeds with that answer.
func TestWholeStreamAwaitingUsageKeptAtJobDeadline(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		for _, c := range []string{
			`{"id":"c","object":"chat.completion.chunk","created":1700000000,"model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":` + quote(racetest.ValidTriage) + `},"finish_reason":null}]}`,
			`{"id":"c","object":"chat.completion.chunk","created":1700000000,"model":"m","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`,
		} {
			fmt.Fprintf(w, "data: %s\n\n", c)
		}
		w.(http.Flusher).Flush()
		select { // held open: no usage chunk, no [DONE]
		case <-release:
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(release) })
	p, err := providers.NewOpenAI(providers.OpenAIConfig{Name: "primary", BaseURL: srv.URL + "/v1", APIKey: "sk-test", Model: "gpt-test",
		Stream: true, StreamIdleTimeout: 30 * time.Second, Timeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	b := racetest.New(t, racetest.Options{Route: race.Route{Deadline: 2 * time.Second}, Providers: []racetest.Provider{
		{Name: "primary", Adapter: p},
	}})
	j := b.WaitSettled(t, b.Submit(t).ID)
	if j.State != store.JobSucceeded {
		msg := ""
		if j.Error != nil {
			msg = *j.Error
		}
		t.Fatalf("job %s (%s): its whole answer came at once, and the job's deadline threw it away", j.State, msg)
	}
}

func quote(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`).Replace(s) + `"`
}
