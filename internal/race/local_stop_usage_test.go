package race_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/routerhq/router/internal/chat"
	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/racetest"
	"github.com/routerhq/router/internal/store"
	"github.com/routerhq/router/internal/tokens"
)

// A chat request's whitespace-only stop ("\n") is applied by the Anthropic
// adapter itself, which cuts the answer at its first match; the provider
// generated, and billed, the whole answer. When the stream's message_delta
// gave no output count, the adapter estimates the output from the whole
// answer before the cut — but the race recounted it from the cut content
// alone and replaced the count: a 2,000-word answer cut after its first line
// was recorded and priced as a few output tokens. The recount includes the
// text cut away now. So does the estimate of an answer whose server counts
// no input (the adapter drops such a usage whole). Found by review.
func TestLocalStopRecountKeepsTheCutText(t *testing.T) {
	for name, c := range map[string]struct{ input, delta string }{
		"no output count": {`12`, `{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null}}`},
		"no input count":  {`0`, `{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":2003}}`},
	} {
		t.Run(name, func(t *testing.T) { localStopCut(t, c.input, c.delta) })
	}
}

// localStopCut runs a chat job with the stop "\n" on an Anthropic stream whose
// message_start reports input input tokens and whose message_delta is delta,
// and checks the won attempt's usage counts the text cut away.
func localStopCut(t *testing.T, input, delta string) {
	first, tail := "Line one.", "\n"+strings.Repeat("word ", 2000)
	text, err := json.Marshal(first + tail)
	if err != nil {
		t.Fatal(err)
	}
	events := []string{
		`{"type":"message_start","message":{"id":"msg_cut","type":"message","role":"assistant","model":"claude-test","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":` + input + `,"output_tokens":1}}}`,
		`{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`,
		`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":` + string(text) + `}}`,
		`{"type":"content_block_stop","index":0}`,
		delta,
		`{"type":"message_stop"}`,
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		for _, ev := range events {
			var typ struct {
				Type string `json:"type"`
			}
			if err := json.Unmarshal([]byte(ev), &typ); err != nil {
				panic(err)
			}
			fmt.Fprintf(w, "event: %s\ndata: %s\n\n", typ.Type, ev)
		}
	}))
	t.Cleanup(srv.Close)
	adapter, err := providers.NewAnthropic(providers.AnthropicConfig{Name: "anthropic", BaseURL: srv.URL, APIKey: "sk-ant",
		Model: "claude-test", Stream: true})
	if err != nil {
		t.Fatal(err)
	}
	b := racetest.New(t, racetest.Options{Providers: []racetest.Provider{
		{Name: "anthropic", Adapter: adapter, Price: &providers.Price{InputPerMTok: 1, OutputPerMTok: 10}},
	}})
	body := json.RawMessage(`{"messages":[{"role":"user","content":"Write a long essay."}],"stop":["\n"]}`)
	op := chat.Operation("default")
	fp, err := store.Fingerprint(op, "", "default", body)
	if err != nil {
		t.Fatal(err)
	}
	job, created, err := b.Store.CreateJob(context.Background(), store.NewJob{
		Owner: "acme", Operation: op, IdempotencyKey: "local-stop-cut", Fingerprint: fp,
		Route: "default", Input: body, LeaseOwner: "test-runner", LeaseFor: 30 * time.Second,
	})
	if err != nil || !created {
		t.Fatalf("create job: %v created=%v", err, created)
	}
	b.Runner.Submit(job)
	j := b.WaitSettled(t, job.ID)
	won := racetest.AttemptOn(j, "anthropic")
	if j.State != store.JobSucceeded || won == nil || won.State != store.AttemptWon {
		t.Fatalf("job %s %v, want the Anthropic attempt's win", j.State, attemptsOf(j))
	}
	if !strings.Contains(string(j.Result), first) || strings.Contains(string(j.Result), "word") {
		t.Fatalf("result %.200s: want the answer cut at the newline, %q", j.Result, first)
	}
	enc, err := tokens.EncodingForModel("", won.Model)
	if err != nil {
		t.Fatal(err)
	}
	cut, err := tokens.CountText(enc, tail)
	if err != nil {
		t.Fatal(err)
	}
	u := estimated(t, won)
	if u.PromptTokens <= 0 || u.CompletionTokens < cut || u.TotalTokens != u.PromptTokens+u.CompletionTokens || !u.Estimated {
		t.Errorf("usage %s: want the input tokens and, estimated, at least the %d output tokens of the text cut away "+
			"at the stop (the provider generated and billed the whole answer)", won.Usage, cut)
	}
}
