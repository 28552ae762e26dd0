package race_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/race"
	"github.com/routerhq/router/internal/racetest"
	"github.com/routerhq/router/internal/store"
)

// A target behind nginx whose client_max_body_size the request exceeds gets
// nginx's HTML 413 page, not its API's verdict: the race fails over to the
// route's next target, which answers, without retrying the proxied one.
// It stopped the job as the caller's bad request.
func TestProxyPage413FailsOverToTheNextTarget(t *testing.T) {
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		calls.Add(1)
		w.Header().Set("Content-Type", "text/html")
		w.WriteHeader(http.StatusRequestEntityTooLarge)
		fmt.Fprint(w, `<html><head><title>413 Request Entity Too Large</title></head><body><center><h1>413 Request Entity Too Large</h1></center><hr><center>nginx/1.25.3</center></body></html>`)
	}))
	t.Cleanup(srv.Close)
	adapter, err := providers.NewOpenAI(providers.OpenAIConfig{Name: "proxied", BaseURL: srv.URL + "/v1", APIKey: "sk-test", Model: "gpt-test"})
	if err != nil {
		t.Fatal(err)
	}
	b := racetest.New(t, racetest.Options{Route: race.Route{}, Providers: []racetest.Provider{
		{Name: "proxied", Adapter: adapter, MaxRetries: 2},
		{Name: "direct", Respond: racetest.OK(validTriage)},
	}})
	j := b.WaitSettled(t, b.Submit(t).ID)
	b.Stop()
	if j.State != store.JobSucceeded {
		t.Fatalf("job %s, want succeeded on the next target (attempt errors: %s)", j.State, openingLastError(j))
	}
	if n := calls.Load(); n != 1 {
		t.Fatalf("the proxied target was called %d times, want once (no retry of a proxy's 413)", n)
	}
}
