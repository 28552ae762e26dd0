package race_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/routerhq/router/internal/metrics"
	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/race"
	"github.com/routerhq/router/internal/racetest"
	"github.com/routerhq/router/internal/store"
	"github.com/routerhq/router/internal/tokens"
)

// deltaSignal wraps a streaming adapter: its calls stream with an onDelta
// that closes streamed once a content delta has been taken, and it keeps the
// request sent.
type deltaSignal struct {
	providers.Provider
	once     sync.Once
	streamed chan struct{}
	mu       sync.Mutex
	sent     *providers.Request
}

func (s *deltaSignal) Complete(ctx context.Context, req *providers.Request) (*providers.Response, error) {
	s.mu.Lock()
	s.sent = req
	s.mu.Unlock()
	return s.Provider.(providers.Streamer).CompleteStream(ctx, req, func(string) {
		s.once.Do(func() { close(s.streamed) })
	})
}

// A hedge loser that had streamed part of its answer when the hedge won was
// recorded with the prompt's tokens only: its provider billed the output it
// had generated too, at several times the price of input, so the loser's
// cost_usd, the job's lost_cost_usd, router_cost_usd_total and
// router_tokens_total counted a fraction of it. The part that came is
// counted as estimated completion tokens now. Found by review.
//
// Without timing: the primary stays silent until the hedge has started
// (nothing would hedge an attempt that had begun answering), then streams
// part of its answer and holds the stream open; the hedge answers once the
// router has taken that part.
func TestHedgeLoserThatStreamedCountsItsPartialAnswer(t *testing.T) {
	partial := racetest.ValidTriage[:len(racetest.ValidTriage)/2]
	hedged := make(chan struct{})
	primary := &deltaSignal{streamed: make(chan struct{}), Provider: openAIStreaming(t, func(_ int, w http.ResponseWriter, r *http.Request) {
		select {
		case <-hedged:
		case <-r.Context().Done():
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		fmt.Fprint(w, streamChunk(partial, ""))
		w.(http.Flusher).Flush()
		<-r.Context().Done() // held open until the router cancels the loser
	})}
	m := metrics.New(metrics.Options{NoProcessCollectors: true})
	b := racetest.New(t, racetest.Options{Route: race.Route{HedgeAfter: time.Millisecond}, Observer: m,
		Providers: []racetest.Provider{
			{Name: "primary", Adapter: primary, Price: &providers.Price{InputPerMTok: 10, OutputPerMTok: 100}},
			{Name: "fallback", Respond: func(int, *providers.Request) providers.Step {
				close(hedged)
				<-primary.streamed // the router has taken the primary's partial answer
				return providers.Step{Output: racetest.ValidTriage, Usage: &providers.Usage{PromptTokens: 100, CompletionTokens: 10, TotalTokens: 110}}
			}},
		}})
	id := b.Submit(t).ID
	b.WaitSettled(t, id)
	b.Stop() // waits for the cancelled primary's end to be recorded
	j := b.Job(t, id)
	p := racetest.AttemptOn(j, "primary")
	if j.State != store.JobSucceeded || p == nil || p.State != store.AttemptCancelled {
		t.Fatalf("job %s, attempts %+v: want the primary cancelled and the hedge's win", j.State, j.Attempts)
	}
	primary.mu.Lock()
	in := promptTokens(t, primary.sent)
	primary.mu.Unlock()
	enc, err := tokens.EncodingForModel("", "primary-model")
	if err != nil {
		t.Fatal(err)
	}
	out, err := tokens.CountText(enc, partial)
	if err != nil || out <= 0 {
		t.Fatalf("count: %d %v", out, err)
	}
	if u := estimated(t, p); u.PromptTokens != in || u.CompletionTokens != out || u.TotalTokens != in+out || !u.Estimated {
		t.Fatalf("the loser's usage %s, want %d prompt and %d completion tokens, estimated", p.Usage, in, out)
	}
	lost := float64(in*10+out*100) / 1e6
	if p.CostUSD == nil || !near(*p.CostUSD, lost) || j.LostCostUSD == nil || !near(*j.LostCostUSD, lost) {
		t.Fatalf("loser cost %v, job lost cost %v; want %v", p.CostUSD, j.LostCostUSD, lost)
	}
	if got := testutil.ToFloat64(m.CostCounter().WithLabelValues("acme", "primary", "primary-model")); !near(got, lost) {
		t.Fatalf("router_cost_usd_total of the loser = %v, want %v", got, lost)
	}
	if got := tokensCounted(t, m, "primary", "completion"); got != float64(out) {
		t.Fatalf("router_tokens_total{kind=completion} of the loser = %v, want %d", got, out)
	}
}

// tokensCounted is router_tokens_total{provider, kind}.
func tokensCounted(t *testing.T, m *metrics.Metrics, provider, kind string) float64 {
	t.Helper()
	fams, err := m.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fams {
		if f.GetName() != "router_tokens_total" {
			continue
		}
		for _, mt := range f.GetMetric() {
			labels := map[string]string{}
			for _, l := range mt.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			if labels["provider"] == provider && labels["kind"] == kind {
				return mt.GetCounter().GetValue()
			}
		}
	}
	return 0
}

// The same loser on Anthropic's stream: its message_start reports the input
// tokens and a provisional output count of 1 (the real count comes in
// message_delta, at the end, which a loser never reaches). The input count
// is the provider's, and the output count is raised to the part that had
// come, estimated. (Found by review: it was recorded as 1 output token.)
func TestAnthropicHedgeLoserCountsItsPartialAnswer(t *testing.T) {
	partial := racetest.ValidTriage[:len(racetest.ValidTriage)/2]
	hedged := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		select {
		case <-hedged:
		case <-r.Context().Done():
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		text, _ := json.Marshal(partial)
		for _, ev := range []string{
			`{"type":"message_start","message":{"id":"msg_l","type":"message","role":"assistant","model":"claude-test","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":40,"output_tokens":1}}}`,
			`{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`,
			`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":` + string(text) + `}}`,
		} {
			var typ struct{ Type string }
			json.Unmarshal([]byte(ev), &typ)
			fmt.Fprintf(w, "event: %s\ndata: %s\n\n", typ.Type, ev)
		}
		w.(http.Flusher).Flush()
		<-r.Context().Done() // held open until the router cancels the loser
	}))
	t.Cleanup(srv.Close)
	claude, err := providers.NewAnthropic(providers.AnthropicConfig{Name: "primary", BaseURL: srv.URL, APIKey: "sk-ant", Model: "claude-test", Stream: true})
	if err != nil {
		t.Fatal(err)
	}
	primary := &deltaSignal{streamed: make(chan struct{}), Provider: claude}
	b := racetest.New(t, racetest.Options{Route: race.Route{HedgeAfter: time.Millisecond},
		Providers: []racetest.Provider{
			{Name: "primary", Adapter: primary},
			{Name: "fallback", Respond: func(int, *providers.Request) providers.Step {
				close(hedged)
				<-primary.streamed // the router has taken the primary's partial answer
				return providers.Step{Output: racetest.ValidTriage}
			}},
		}})
	id := b.Submit(t).ID
	b.WaitSettled(t, id)
	b.Stop() // waits for the cancelled primary's end to be recorded
	j := b.Job(t, id)
	p := racetest.AttemptOn(j, "primary")
	if j.State != store.JobSucceeded || p == nil || p.State != store.AttemptCancelled {
		t.Fatalf("job %s, attempts %+v: want the primary cancelled and the hedge's win", j.State, j.Attempts)
	}
	enc, err := tokens.EncodingForModel("", "primary-model")
	if err != nil {
		t.Fatal(err)
	}
	out, err := tokens.CountText(enc, partial)
	if err != nil || out <= 1 {
		t.Fatalf("count: %d %v", out, err)
	}
	if u := estimated(t, p); u.PromptTokens != 40 || u.CompletionTokens != out || u.TotalTokens != 40+out || !u.Estimated {
		t.Fatalf("the loser's usage %s, want the provider's 40 prompt tokens and %d completion tokens, estimated", p.Usage, out)
	}
}
