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
	"github.com/routerhq/router/internal/providers/anthropicfake"
	"github.com/routerhq/router/internal/race"
	"github.com/routerhq/router/internal/racetest"
	"github.com/routerhq/router/internal/store"
)

// emptyAtStop is OpenAI's answer when the model begins with one of the
// caller's stop sequences: 200, content "", finish_reason "stop".
const emptyAtStop = `{"id":"chatcmpl-1","object":"chat.completion","created":1,"model":"gpt-4o-mini","choices":[{"index":0,"message":{"role":"assistant","content":""},"finish_reason":"stop"}],"usage":{"prompt_tokens":9,"completion_tokens":1,"total_tokens":10}}`

func emptyAtStopServer(t *testing.T) *providers.OpenAI {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(emptyAtStop))
	}))
	t.Cleanup(srv.Close)
	oa, err := providers.NewOpenAI(providers.OpenAIConfig{Name: "oa", BaseURL: srv.URL, Model: "gpt-4o-mini", Timeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	return oa
}

// runChat creates a chat job of input on the bundle's default route, runs it
// and returns it settled.
func runChat(t *testing.T, b *racetest.Bundle, input json.RawMessage, key string) *store.Job {
	t.Helper()
	op := chat.Operation("default")
	fp, err := store.Fingerprint(op, "", "default", input)
	if err != nil {
		t.Fatal(err)
	}
	nj := store.NewJob{Owner: "tenant-a", Operation: op, IdempotencyKey: key, Fingerprint: fp, Route: "default",
		Input: input, LeaseOwner: "test-runner", LeaseFor: 30 * time.Second}
	plan, routing, planned, err := b.Runner.Plan(&store.Job{Operation: op, Route: "default", Input: input})
	if err != nil || !planned {
		t.Fatalf("job %s: tenant-a's earlier jobs left no eligible target (%v): %s", key, err, routing)
	}
	nj.First = plan.First()
	job, _, err := b.Store.CreateJob(context.Background(), nj)
	if err != nil {
		t.Fatal(err)
	}
	b.Runner.SubmitNew(job, plan)
	return b.WaitSettled(t, job.ID)
}

// wantEmptyAtStop fails unless j won with content "" (not null) and
// finish_reason "stop", as OpenAI answers it.
func wantEmptyAtStop(t *testing.T, j *store.Job) {
	t.Helper()
	if j.State != store.JobSucceeded {
		t.Errorf("job %s: %s (error %q), want the empty answer at the caller's stop sequence to win as OpenAI answers it",
			j.IdempotencyKey, j.State, deref(j.Error))
		return
	}
	c, err := chat.DecodeCompletion(j.Result)
	if err != nil {
		t.Fatal(err)
	}
	if ch := c.Choices[0]; ch.Message.Content == nil || *ch.Message.Content != "" || ch.Message.ToolCalls != nil || ch.FinishReason != "stop" {
		t.Errorf("job %s: result %s, want content \"\" and finish_reason \"stop\"", j.IdempotencyKey, j.Result)
	}
}

func wantClosed(t *testing.T, set *breaker.Set) {
	t.Helper()
	for _, s := range set.Snapshot() {
		if s.State != breaker.StateClosed || s.Counts.TotalFailures != 0 {
			t.Errorf("breaker of %s is %s (%+v): tenant-a's own stop sequence counted against it for every tenant", s.Provider, s.State, s.Counts)
		}
	}
}

// A caller sends stop: ["OK"] and "Answer with the word OK only"; OpenAI
// answers 200 with content "" and finish_reason "stop" — what the caller
// asked for. The router judged the empty answer the provider's failure
// ("empty", chat.ProviderRule): the caller got a failed job (502
// upstream_failed), the race failed over to every other target, and each
// target's breaker counted a failure, so a handful of such requests opened
// every breaker of the route for every tenant. The answer now wins as
// OpenAI gives it, and the breaker counts nothing. Found by review.
func TestCallersStopSequenceLeavesTheBreakerClosed(t *testing.T) {
	oa := emptyAtStopServer(t)
	set := breaker.New(map[string]breaker.Settings{"oa": {ConsecutiveFailures: 3, OpenFor: time.Minute}}, breaker.Options{})
	defer set.Close()
	b := racetest.New(t, racetest.Options{Route: race.Route{}, Admission: set, Providers: []racetest.Provider{{Name: "oa", Adapter: oa}}})
	input, err := json.Marshal(chat.Input{Messages: []providers.Message{{Role: "user", Content: "Answer with the word OK only."}}, Stop: []string{"OK"}})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		wantEmptyAtStop(t, runChat(t, b, input, fmt.Sprintf("k%d", i)))
	}
	wantClosed(t, set)
}

// The Anthropic adapter applies whitespace-only stop sequences itself
// (Anthropic refuses them): an answer that begins with "\n" under stop:
// ["\n"] is cut to "" with finish "stop" by the router's own adapter. The
// router blamed the provider for its own cut. Streamed or not, it now wins as
// OpenAI would answer it, and the breaker counts nothing.
func TestAnthropicLocalStopCutToNothingLeavesTheBreakerClosed(t *testing.T) {
	for _, stream := range []bool{false, true} {
		t.Run(fmt.Sprintf("stream=%v", stream), func(t *testing.T) {
			srv := anthropicfake.New(t, func(anthropicfake.Request) anthropicfake.Reply {
				return anthropicfake.Reply{Text: "\nOK", InputTokens: 9, OutputTokens: 2}
			})
			an, err := providers.NewAnthropic(providers.AnthropicConfig{Name: "an", BaseURL: srv.URL, APIKey: "sk-ant-test",
				Model: "claude-test", Timeout: 10 * time.Second, Stream: stream})
			if err != nil {
				t.Fatal(err)
			}
			set := breaker.New(map[string]breaker.Settings{"an": {ConsecutiveFailures: 3, OpenFor: time.Minute}}, breaker.Options{})
			defer set.Close()
			b := racetest.New(t, racetest.Options{Route: race.Route{}, Admission: set, Providers: []racetest.Provider{{Name: "an", Adapter: an}}})
			input, err := json.Marshal(chat.Input{Messages: []providers.Message{{Role: "user", Content: "hi"}}, Stop: []string{"\n"}})
			if err != nil {
				t.Fatal(err)
			}
			for i := range 3 {
				wantEmptyAtStop(t, runChat(t, b, input, fmt.Sprintf("k%d", i)))
			}
			wantClosed(t, set)
		})
	}
}

// Without stop sequences an empty answer that says it is whole is still the
// provider's failure: the race fails over to the next target, whose answer
// wins, and the empty answer's target counts a failure.
func TestEmptyAnswerWithoutStopStillFailsOver(t *testing.T) {
	oa := emptyAtStopServer(t)
	set := breaker.New(map[string]breaker.Settings{
		"oa":       {ConsecutiveFailures: 3, OpenFor: time.Minute},
		"fallback": {ConsecutiveFailures: 3, OpenFor: time.Minute},
	}, breaker.Options{})
	defer set.Close()
	b := racetest.New(t, racetest.Options{Route: race.Route{}, Admission: set, Providers: []racetest.Provider{
		{Name: "oa", Adapter: oa},
		{Name: "fallback", Respond: racetest.OK("OK")},
	}})
	input, err := json.Marshal(chat.Input{Messages: []providers.Message{{Role: "user", Content: "Answer with the word OK only."}}})
	if err != nil {
		t.Fatal(err)
	}
	j := runChat(t, b, input, "k0")
	if j.State != store.JobSucceeded {
		t.Fatalf("job: %s (error %q), want the fallback's answer to win", j.State, deref(j.Error))
	}
	if c, err := chat.DecodeCompletion(j.Result); err != nil || c.Choices[0].Message.Text() != "OK" {
		t.Fatalf("result %s (%v), want the fallback's \"OK\"", j.Result, err)
	}
	if a := racetest.AttemptOn(j, "oa"); a == nil || a.State != store.AttemptInvalid {
		t.Fatalf("attempt on oa: %+v, want it invalid (the empty answer)", a)
	}
	for _, s := range set.Snapshot() {
		want := uint32(0)
		if s.Provider == "oa" {
			want = 1
		}
		if s.Counts.TotalFailures != want {
			t.Errorf("breaker of %s counted %d failures, want %d", s.Provider, s.Counts.TotalFailures, want)
		}
	}
}
