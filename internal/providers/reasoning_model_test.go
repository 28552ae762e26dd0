package providers

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"testing"
)

// OpenAI's reasoning models (o1, o3, o4, gpt-5…) take max_completion_tokens,
// not max_tokens, and only their default temperature: a prompt's max_tokens
// and temperature 0 reach them as max_completion_tokens and no temperature,
// and the call is sent. (Before, go-openai refused the request before sending
// it — "request rejected by the client library", kind misconfigured, a
// breaker failure on a healthy target — for every prompt with a max_tokens,
// and conformance, at temperature 0, could never pass on such a target.)
// Other models keep max_tokens and an explicit zero temperature.
func TestReasoningModelsGetMaxCompletionTokens(t *testing.T) {
	for _, c := range []struct {
		model                  string
		wantMaxTokens, wantMCT bool
		wantTemperature        bool
	}{
		{model: "o3-mini", wantMCT: true},
		{model: "gpt-5-mini", wantMCT: true},
		{model: "gpt-4o-mini", wantMaxTokens: true, wantTemperature: true},
	} {
		url, bodies := bodyServer(t)
		p := newTestAdapter(t, url, func(c2 *OpenAIConfig) { c2.Model = c.model })
		req := testRequest()
		req.MaxTokens = 300
		zero := float32(0)
		req.Temperature = &zero
		if _, err := p.Complete(context.Background(), req); err != nil {
			t.Fatalf("%s: %v; want the request sent and answered", c.model, err)
		}
		body := <-bodies
		_, hasMax := body["max_tokens"]
		mct, hasMCT := body["max_completion_tokens"]
		_, hasTemp := body["temperature"]
		if hasMax != c.wantMaxTokens || hasMCT != c.wantMCT || hasTemp != c.wantTemperature || (hasMCT && mct != float64(300)) {
			t.Errorf("%s: max_tokens %v, max_completion_tokens %v (%v), temperature %v; want %v, %v (300), %v",
				c.model, hasMax, hasMCT, mct, hasTemp, c.wantMaxTokens, c.wantMCT, c.wantTemperature)
		}
	}
}

// top_p and stop reach an OpenAI-compatible provider as OpenAI names them.
func TestOpenAISendsTopPAndStop(t *testing.T) {
	url, bodies := bodyServer(t)
	p := newTestAdapter(t, url, nil)
	req := testRequest()
	topP := float32(0.25)
	req.TopP, req.Stop = &topP, []string{"END"}
	if _, err := p.Complete(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	body := <-bodies
	if stop, _ := body["stop"].([]any); body["top_p"] != 0.25 || len(stop) != 1 || stop[0] != "END" {
		t.Fatalf("the provider received top_p %v, stop %v; want 0.25 and [END]", body["top_p"], body["stop"])
	}
}

// bodyServer is a fake OpenAI that answers every call with completionBody and
// hands each request's decoded body to bodies.
func bodyServer(t *testing.T) (url string, bodies <-chan map[string]any) {
	ch := make(chan map[string]any, 1)
	srv := newFakeServer(t, func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		var m map[string]any
		_ = json.Unmarshal(b, &m)
		ch <- m
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, completionBody)
	})
	return srv.URL, ch
}
