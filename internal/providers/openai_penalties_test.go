package providers

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"

	openai "github.com/sashabaranov/go-openai"
)

// presence_penalty, frequency_penalty, logit_bias and reasoning_effort reach
// an OpenAI-compatible provider as OpenAI names and shapes them, in the body
// go-openai itself would send for the request (plain and streamed); a zero
// penalty is left out, as it is OpenAI's default.
func TestOpenAISendsPenaltiesLogitBiasAndReasoningEffort(t *testing.T) {
	c, url := answeringCapture(t)
	p := newTestAdapter(t, url, nil)
	req := testRequest()
	req.PresencePenalty, req.FrequencyPenalty = 0.5, -1.25
	req.LogitBias = map[string]int{"50256": -100, "1234": 7}
	req.ReasoningEffort = "low"
	for _, stream := range []bool{false, true} {
		got, wantBody := sentBody(t, p, c, req, stream)
		for _, member := range []string{`"presence_penalty":0.5`, `"frequency_penalty":-1.25`, `"logit_bias":{"1234":7,"50256":-100}`, `"reasoning_effort":"low"`} {
			if !bytes.Contains(got, []byte(member)) {
				t.Errorf("stream %v: the provider received %s, without %s", stream, got, member)
			}
		}
		if !bytes.Equal(got, wantBody) {
			t.Errorf("stream %v: the provider received\n%s\nwant (go-openai's encoding)\n%s", stream, got, wantBody)
		}
	}
	req.PresencePenalty, req.FrequencyPenalty, req.LogitBias, req.ReasoningEffort = 0, 0, nil, ""
	if _, err := p.Complete(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"presence_penalty", "frequency_penalty", "logit_bias", "reasoning_effort"} {
		if got := c.last(t); bytes.Contains(got, []byte(`"`+name+`"`)) {
			t.Errorf("a request without %s sent %s", name, got)
		}
	}
}

// A reasoning model gets the caller's reasoning_effort. A penalty it cannot
// take, or an effort a GPT-6 model does not know, is refused before anything
// is sent, as the request's fault that may fail over to another target (as a
// temperature it cannot take is: TestReasoningModelsRefusalStaysGoOpenAIs).
func TestReasoningModelsAndPenaltiesAndEffort(t *testing.T) {
	url, bodies := bodyServer(t)
	p := newTestAdapter(t, url, func(c *OpenAIConfig) { c.Model = "o3-mini" })
	req := testRequest()
	req.MaxTokens, req.ReasoningEffort = 300, "high"
	if _, err := p.Complete(context.Background(), req); err != nil {
		t.Fatalf("o3-mini with reasoning_effort high: %v; want it sent", err)
	}
	if body := <-bodies; body["reasoning_effort"] != "high" || body["max_completion_tokens"] != float64(300) {
		t.Errorf("o3-mini received reasoning_effort %v, max_completion_tokens %v; want high and 300", body["reasoning_effort"], body["max_completion_tokens"])
	}

	for _, c := range []struct {
		model string
		set   func(*Request)
		want  error
	}{
		{"o3-mini", func(r *Request) { r.PresencePenalty = 0.5 }, openai.ErrReasoningModelLimitationsOther},
		{"gpt-5-mini", func(r *Request) { r.FrequencyPenalty = 1 }, openai.ErrReasoningModelLimitationsOther},
		{openai.GPT6Astra, func(r *Request) { r.ReasoningEffort = "minimal" }, openai.ErrReasoningEffortUnsupported},
	} {
		var capture rawCapture
		url := capture.server(t, func(http.ResponseWriter, bool) { t.Errorf("%s: a refused request reached the provider", c.model) })
		p := newTestAdapter(t, url, func(cfg *OpenAIConfig) { cfg.Model = c.model })
		req := testRequest()
		c.set(req)
		_, err := p.Complete(context.Background(), req)
		var pe *Error
		if !errors.Is(err, c.want) || !errors.As(err, &pe) || pe.Kind != KindBadRequest || pe.Action != ActionFailover ||
			!strings.Contains(pe.Message, "leave the parameter out") {
			t.Errorf("%s: %v; want go-openai's %v as a bad request that fails over, saying what to leave out", c.model, err, c.want)
		}
	}
}
