package breaker_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/routerhq/router/internal/breaker"
	"github.com/routerhq/router/internal/chat"
	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/race"
	"github.com/routerhq/router/internal/racetest"
	"github.com/routerhq/router/internal/store"
)

// OpenAI's reasoning models (o-series, gpt-5) spend a small
// max_completion_tokens on reasoning and answer 200 with content "" and
// finish_reason "length". The limit is the caller's; the provider answered
// correctly. The router judged the empty answer the provider's failure
// ("empty", chat.ProviderRule): the caller got a failed job (502) and the
// target's breaker counted it — one tenant sending max_tokens: 16 opened the
// route's breakers for every tenant. The answer now wins as OpenAI gives it,
// and the breaker stays closed. Found by review.
func TestCallersTinyMaxTokensLeavesTheBreakerClosed(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"id":"chatcmpl-1","object":"chat.completion","created":1,"model":"o4-mini","choices":[{"index":0,"message":{"role":"assistant","content":""},"finish_reason":"length"}],"usage":{"prompt_tokens":9,"completion_tokens":16,"total_tokens":25,"completion_tokens_details":{"reasoning_tokens":16}}}`))
	}))
	defer srv.Close()
	oa, err := providers.NewOpenAI(providers.OpenAIConfig{Name: "o4", BaseURL: srv.URL, Model: "o4-mini", Timeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	set := breaker.New(map[string]breaker.Settings{"o4": {ConsecutiveFailures: 3, OpenFor: time.Minute}}, breaker.Options{})
	defer set.Close()
	b := racetest.New(t, racetest.Options{Route: race.Route{}, Admission: set, Providers: []racetest.Provider{{Name: "o4", Adapter: oa}}})
	input, err := json.Marshal(chat.Input{Messages: []providers.Message{{Role: "user", Content: "hi"}}, MaxTokens: 16})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		op := chat.Operation("default")
		fp, _ := store.Fingerprint(op, "", "default", input)
		nj := store.NewJob{Owner: "tenant-a", Operation: op, IdempotencyKey: fmt.Sprintf("k%d", i), Fingerprint: fp, Route: "default",
			Input: input, LeaseOwner: "test-runner", LeaseFor: 30 * time.Second}
		plan, routing, planned, err := b.Runner.Plan(&store.Job{Operation: op, Route: "default", Input: input})
		if err != nil || !planned {
			t.Fatalf("plan %d: tenant-a's earlier jobs left no eligible target (%v): %s", i, err, routing)
		}
		nj.First = plan.First()
		job, _, err := b.Store.CreateJob(context.Background(), nj)
		if err != nil {
			t.Fatal(err)
		}
		b.Runner.SubmitNew(job, plan)
		j := b.WaitSettled(t, job.ID)
		if j.State != store.JobSucceeded {
			t.Fatalf("job %d: %s (error %q), want the empty answer at length to win as OpenAI answers it", i, j.State, deref(j.Error))
		}
		c, err := chat.DecodeCompletion(j.Result)
		if err != nil {
			t.Fatal(err)
		}
		if ch := c.Choices[0]; ch.Message.Text() != "" || ch.Message.Content == nil || ch.FinishReason != "length" {
			t.Errorf("job %d: result %s, want content \"\" and finish_reason \"length\"", i, j.Result)
		}
	}
	for _, s := range set.Snapshot() {
		if s.State != breaker.StateClosed {
			t.Errorf("breaker of %s is %s (%+v): tenant-a's max_tokens opened it for every tenant", s.Provider, s.State, s.Counts)
		}
	}
}
