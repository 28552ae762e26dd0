package race_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/race"
	"github.com/routerhq/router/internal/racetest"
	"github.com/routerhq/router/internal/store"
)

// A gateway in front of Anthropic that leaves the connection open after
// message_stop made the whole answer wait for an end of body that never
// came: the attempt failed (stream_stalled) and the job failed over,
// though the answer had come whole and was billed. The adapter stops at
// message_stop: the Anthropic attempt wins. Found by review.
func TestAnthropicAnswerWholeAtMessageStopWins(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		text, _ := json.Marshal(racetest.ValidTriage)
		for _, ev := range []string{
			`event: message_start` + "\n" + `data: {"type":"message_start","message":{"id":"msg_open","type":"message","role":"assistant","model":"claude-test-1","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":40,"output_tokens":1}}}`,
			`event: content_block_start` + "\n" + `data: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`,
			`event: content_block_delta` + "\n" + `data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":` + string(text) + `}}`,
			`event: content_block_stop` + "\n" + `data: {"type":"content_block_stop","index":0}`,
			`event: message_delta` + "\n" + `data: {"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":20}}`,
			`event: message_stop` + "\n" + `data: {"type":"message_stop"}`,
		} {
			w.Write([]byte(ev + "\n\n"))
		}
		w.(http.Flusher).Flush()
		select { // the gateway keeps the connection open
		case <-r.Context().Done():
		case <-release:
		}
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(release) }) // runs first: a blocked handler returns
	// The idle deadline only bounds the failure this test guards against;
	// the answer is whole long before it.
	primary, err := providers.NewAnthropic(providers.AnthropicConfig{Name: "anthropic", BaseURL: srv.URL, APIKey: "sk-ant", Model: "claude-test",
		Stream: true, StreamIdleTimeout: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	b := racetest.New(t, racetest.Options{Route: race.Route{}, Providers: []racetest.Provider{
		{Name: "anthropic", Adapter: primary},
		{Name: "fallback", Respond: racetest.OK(racetest.ValidTriage)},
	}})
	j := b.WaitSettled(t, b.Submit(t).ID)
	won := racetest.AttemptOn(j, "anthropic")
	if j.State != store.JobSucceeded || won == nil || won.State != store.AttemptWon {
		for _, a := range j.Attempts {
			t.Logf("attempt on %s: %s, error %s", a.Provider, a.State, a.Error)
		}
		t.Fatalf("job %s: want the Anthropic attempt's win", j.State)
	}
	var u providers.Usage
	if err := json.Unmarshal(won.Usage, &u); err != nil || u.PromptTokens != 40 || u.CompletionTokens != 20 {
		t.Fatalf("usage %s (%v), want the 40 input and 20 output tokens Anthropic reported", won.Usage, err)
	}
	if f := racetest.AttemptOn(j, "fallback"); f != nil {
		t.Fatalf("the fallback ran: %+v", f)
	}
}
