package race_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/providers/anthropicfake"
	"github.com/routerhq/router/internal/race"
	"github.com/routerhq/router/internal/racetest"
	"github.com/routerhq/router/internal/store"
)

// docs/providers.md (Cost): an answer whose provider reported no usage, or a
// total_tokens with no split ("both counts are the router's"), or
// completion_tokens 0 for an answer with content, is counted by the router —
// "This holds for a winner, a loser, an invalid answer, a failed answer the
// provider billed (a refusal, a content filter, …)". The router counts a
// billed failure's answer from providers.Error.Partial (billedUsage,
// estimatedUsage, provisionalUsage: partialOf), but the OpenAI-compatible
// adapter sets Partial only on a streamed error that has no usage
// (withPartial): a non-streamed billed failure (finish() → billed/brokenOff)
// never carries its answer's text, and a streamed one whose usage chunk came
// does not either. So the answer the provider generated, and billed at the
// output price, counts 0 completion tokens, while the same answer streamed
// without a usage chunk (the control) counts its text.
func TestBilledFailureCountsItsAnswerText(t *testing.T) {
	answer := strings.Repeat("The printer in room four caught fire during the quarterly report run, and the facilities team was called. ", 12)
	text, _ := json.Marshal(answer)
	whole := func(usage string) func(w http.ResponseWriter) {
		return func(w http.ResponseWriter) {
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"id":"chatcmpl-1","object":"chat.completion","created":1,"model":"gpt-test","choices":[{"index":0,`+
				`"message":{"role":"assistant","content":%s},"finish_reason":"error"}]%s}`, text, usage)
		}
	}
	streamed := func(usage string) func(w http.ResponseWriter) {
		return func(w http.ResponseWriter) {
			w.Header().Set("Content-Type", "text/event-stream")
			fmt.Fprintf(w, "data: {\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"gpt-test\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":%s},\"finish_reason\":null}]}\n\n", text)
			fmt.Fprint(w, "data: {\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"gpt-test\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"error\"}]}\n\n")
			if usage != "" {
				fmt.Fprintf(w, "data: {\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"gpt-test\",\"choices\":[],\"usage\":%s}\n\n", usage)
			}
			fmt.Fprint(w, "data: [DONE]\n\n")
		}
	}
	cases := []struct {
		name   string
		stream bool
		answer func(w http.ResponseWriter)
	}{
		{"control: streamed, no usage chunk", true, streamed("")},
		{"not streamed, no usage", false, whole("")},
		{"not streamed, completion_tokens 0", false, whole(`,"usage":{"prompt_tokens":20,"completion_tokens":0,"total_tokens":20}`)},
		{"not streamed, total_tokens only", false, whole(`,"usage":{"total_tokens":81}`)},
		{"streamed, total_tokens only", true, streamed(`{"total_tokens":81}`)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { c.answer(w) }))
			t.Cleanup(srv.Close)
			adapter, err := providers.NewOpenAI(providers.OpenAIConfig{Name: "primary", BaseURL: srv.URL + "/v1", APIKey: "sk-test",
				Model: "gpt-test", Stream: c.stream})
			if err != nil {
				t.Fatal(err)
			}
			b := racetest.New(t, racetest.Options{Route: race.Route{}, Providers: []racetest.Provider{
				{Name: "primary", Adapter: adapter, Price: &providers.Price{InputPerMTok: 3, OutputPerMTok: 15}},
				{Name: "fallback", Price: &providers.Price{InputPerMTok: 1, OutputPerMTok: 4},
					Respond: func(int, *providers.Request) providers.Step {
						return providers.Step{Output: racetest.ValidTriage, Usage: &providers.Usage{PromptTokens: 200, CompletionTokens: 30, TotalTokens: 230}}
					}},
			}})
			j := b.WaitSettled(t, b.Submit(t).ID)
			p := racetest.AttemptOn(j, "primary")
			if p == nil || p.State != store.AttemptFailed {
				t.Fatalf("job %s, attempts %+v: want the primary's billed failure", j.State, j.Attempts)
			}
			var u providers.Usage
			_ = json.Unmarshal(p.Usage, &u)
			if u.CompletionTokens < 100 {
				t.Errorf("billed failure's usage %s (error %s): completion_tokens %d for an answer of %d bytes (~230 tokens) the provider "+
					"generated and billed at the output price", p.Usage, p.Error, u.CompletionTokens, len(answer))
			}
		})
	}
}

// The answer's text fills only the holes of a billed failure's usage: a
// completion count the provider reported is kept as it is, not estimated
// over by the router's count of the text (here ~230 tokens against the
// provider's 7), streamed or not.
func TestBilledFailureKeepsReportedOutput(t *testing.T) {
	answer := strings.Repeat("The printer in room four caught fire during the quarterly report run, and the facilities team was called. ", 12)
	text, _ := json.Marshal(answer)
	const usage = `{"prompt_tokens":20,"completion_tokens":7,"total_tokens":27}`
	for _, stream := range []bool{false, true} {
		t.Run(fmt.Sprintf("stream=%v", stream), func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				if !stream {
					w.Header().Set("Content-Type", "application/json")
					fmt.Fprintf(w, `{"id":"chatcmpl-1","object":"chat.completion","created":1,"model":"gpt-test","choices":[{"index":0,`+
						`"message":{"role":"assistant","content":%s},"finish_reason":"error"}],"usage":%s}`, text, usage)
					return
				}
				w.Header().Set("Content-Type", "text/event-stream")
				fmt.Fprintf(w, "data: {\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"gpt-test\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":%s},\"finish_reason\":null}]}\n\n", text)
				fmt.Fprint(w, "data: {\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"gpt-test\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"error\"}]}\n\n")
				fmt.Fprintf(w, "data: {\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"gpt-test\",\"choices\":[],\"usage\":%s}\n\n", usage)
				fmt.Fprint(w, "data: [DONE]\n\n")
			}))
			t.Cleanup(srv.Close)
			adapter, err := providers.NewOpenAI(providers.OpenAIConfig{Name: "primary", BaseURL: srv.URL + "/v1", APIKey: "sk-test",
				Model: "gpt-test", Stream: stream})
			if err != nil {
				t.Fatal(err)
			}
			p := billedFailureOn(t, adapter)
			var u providers.Usage
			_ = json.Unmarshal(p.Usage, &u)
			if u != (providers.Usage{PromptTokens: 20, CompletionTokens: 7, TotalTokens: 27}) {
				t.Errorf("billed failure's usage %s: want the provider's reported 20 + 7 = 27 kept, not estimated over", p.Usage)
			}
		})
	}
}

// The Anthropic adapter's billed failures (a refusal here) carry their
// message's text too: an output count of 0 next to it is raised to the
// router's count, the input tokens kept, and a message whose usage reports no
// input (estimated whole by the race) has its text counted, not only its
// prompt — streamed or not.
func TestAnthropicBilledFailureCountsItsAnswerText(t *testing.T) {
	answer := strings.Repeat("I will not describe how the printer in room four was set on fire during the quarterly report run. ", 12)
	cases := []struct {
		name       string
		stream     bool
		in, out    int
		wantPrompt int // 0: the router's estimate
	}{
		{"output_tokens 0", false, 1000, 0, 1000},
		{"output_tokens 0, streamed", true, 1000, 0, 1000},
		{"no input reported", false, 0, 0, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			claude := anthropicfake.New(t, func(anthropicfake.Request) anthropicfake.Reply {
				return anthropicfake.Reply{Text: answer, StopReason: "refusal", InputTokens: c.in, OutputTokens: c.out}
			})
			adapter, err := providers.NewAnthropic(providers.AnthropicConfig{Name: "primary", BaseURL: claude.URL, APIKey: "sk-ant",
				Model: "claude-test", Stream: c.stream})
			if err != nil {
				t.Fatal(err)
			}
			p := billedFailureOn(t, adapter)
			var u providers.Usage
			_ = json.Unmarshal(p.Usage, &u)
			if u.CompletionTokens < 100 || !u.Estimated || u.TotalTokens != u.PromptTokens+u.CompletionTokens ||
				(c.wantPrompt != 0 && u.PromptTokens != c.wantPrompt) || u.PromptTokens == 0 {
				t.Errorf("refused message's usage %s (error %s): want its ~230-token text counted as output, estimated, "+
					"with the prompt (%d when reported) and a total that adds up", p.Usage, p.Error, c.wantPrompt)
			}
		})
	}
}

// billedFailureOn runs a job whose primary is adapter, which fails with an
// answer it billed, and a fallback that wins: the primary's attempt.
func billedFailureOn(t *testing.T, adapter providers.Provider) *store.Attempt {
	t.Helper()
	b := racetest.New(t, racetest.Options{Route: race.Route{}, Providers: []racetest.Provider{
		{Name: "primary", Adapter: adapter, Price: &providers.Price{InputPerMTok: 3, OutputPerMTok: 15}},
		{Name: "fallback", Price: &providers.Price{InputPerMTok: 1, OutputPerMTok: 4},
			Respond: func(int, *providers.Request) providers.Step {
				return providers.Step{Output: racetest.ValidTriage, Usage: &providers.Usage{PromptTokens: 200, CompletionTokens: 30, TotalTokens: 230}}
			}},
	}})
	j := b.WaitSettled(t, b.Submit(t).ID)
	p := racetest.AttemptOn(j, "primary")
	if p == nil || p.State != store.AttemptFailed {
		t.Fatalf("job %s, attempts %+v: want the primary's billed failure", j.State, j.Attempts)
	}
	return p
}
