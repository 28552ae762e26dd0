package endtoend_test

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/routerhq/router/internal/race"
)

// postKeyedChat sends body to /v1/chat/completions with the caller's key
// and Idempotency-Key key; it returns the status, the job's id and the body.
func postKeyedChat(t *testing.T, url, key, body string) (status int, job, raw string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url+"/v1/chat/completions", strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+callerKey)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Idempotency-Key", key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, resp.Header.Get("X-Router-Job-Id"), string(b)
}

// streamDeltas is each chunk's delta of an SSE body, in order.
func streamDeltas(t *testing.T, sse string) []map[string]any {
	t.Helper()
	var deltas []map[string]any
	for line := range strings.SplitSeq(sse, "\n") {
		data, ok := strings.CutPrefix(line, "data: ")
		if !ok || data == "[DONE]" {
			continue
		}
		var c struct {
			Choices []struct {
				Delta map[string]any `json:"delta"`
			} `json:"choices"`
		}
		if err := json.Unmarshal([]byte(data), &c); err != nil {
			t.Fatalf("chunk %s: %v", data, err)
		}
		if len(c.Choices) > 0 {
			deltas = append(deltas, c.Choices[0].Delta)
		}
	}
	return deltas
}

// The provider's reasoning_content (DeepSeek's reasoner, vLLM's and
// SGLang's reasoning parsers) was dropped from the completion. It reaches
// the caller beside the answer, and a streamed replay of the same job sends
// it as reasoning_content deltas before the content, as those providers'
// streams do. Usage is the provider's. Found by review (rchat2 #5).
func TestReasoningContentReachesTheCaller(t *testing.T) {
	reasoning := "2+2: two and two make " + strings.Repeat("four, ", 20) + "é"
	target, _ := wholeAnswerTarget(t, "deepseek-reasoner", func(map[string]any) (int, string) {
		r, _ := json.Marshal(reasoning)
		return 200, `{"id":"x","object":"chat.completion","created":1700000000,"model":"deepseek-reasoner","choices":[{"index":0,"message":{"role":"assistant","content":"4","reasoning_content":` +
			string(r) + `},"finish_reason":"stop"}],"usage":{"prompt_tokens":5,"completion_tokens":9,"total_tokens":14,"completion_tokens_details":{"reasoning_tokens":5}}}`
	})
	srv, _ := serve(t, map[string]*race.Target{"deepseek": target}, "deepseek")
	const ask = `{"model":"default","messages":[{"role":"user","content":"2+2?"}]`
	status, job, raw := postKeyedChat(t, srv.URL, "reasoning-1", ask+`}`)
	if status != http.StatusOK {
		t.Fatalf("%d %s", status, raw)
	}
	var c struct {
		Choices []struct {
			Message map[string]any `json:"message"`
		} `json:"choices"`
		Usage struct {
			CompletionTokens int `json:"completion_tokens"`
			Details          struct {
				ReasoningTokens int `json:"reasoning_tokens"`
			} `json:"completion_tokens_details"`
		} `json:"usage"`
	}
	if err := json.Unmarshal([]byte(raw), &c); err != nil {
		t.Fatal(err)
	}
	if m := c.Choices[0].Message; m["content"] != "4" || m["reasoning_content"] != reasoning {
		t.Fatalf("the provider's reasoning_content is lost: %s", raw)
	}
	if c.Usage.CompletionTokens != 9 || c.Usage.Details.ReasoningTokens != 5 {
		t.Fatalf("usage: %s", raw)
	}
	status, again, sse := postKeyedChat(t, srv.URL, "reasoning-1", ask+`,"stream":true}`)
	if status != http.StatusOK || again != job {
		t.Fatalf("streamed replay of job %s: %d job %s %s", job, status, again, sse)
	}
	var got, order strings.Builder
	for _, d := range streamDeltas(t, sse) {
		if r, ok := d["reasoning_content"].(string); ok {
			got.WriteString(r)
			order.WriteByte('r')
		}
		if s, ok := d["content"].(string); ok && s != "" {
			order.WriteByte('c')
		}
	}
	if got.String() != reasoning || !strings.HasSuffix(order.String(), "rc") || strings.Contains(order.String(), "cr") {
		t.Fatalf("streamed reasoning %q (deltas %s): %s", got.String(), order.String(), sse)
	}
}

// A streamed provider's reasoning_content deltas are assembled into the
// completion's reasoning_content.
func TestStreamedReasoningContentReachesTheCaller(t *testing.T) {
	url := openAIStream(t,
		`{"id":"s","object":"chat.completion.chunk","created":1,"model":"gpt-test","choices":[{"index":0,"delta":{"role":"assistant","content":null,"reasoning_content":"2+2 "},"finish_reason":null}]}`,
		`{"id":"s","object":"chat.completion.chunk","created":1,"model":"gpt-test","choices":[{"index":0,"delta":{"reasoning_content":"is 4"},"finish_reason":null}]}`,
		`{"id":"s","object":"chat.completion.chunk","created":1,"model":"gpt-test","choices":[{"index":0,"delta":{"content":"4"},"finish_reason":null}]}`,
		`{"id":"s","object":"chat.completion.chunk","created":1,"model":"gpt-test","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`,
		`{"id":"s","object":"chat.completion.chunk","created":1,"model":"gpt-test","choices":[],"usage":{"prompt_tokens":5,"completion_tokens":9,"total_tokens":14}}`,
		"[DONE]")
	srv, _ := serve(t, map[string]*race.Target{"vllm": openAITarget(t, "vllm", url)}, "vllm")
	status, _, raw := postKeyedChat(t, srv.URL, "reasoning-2", `{"model":"default","messages":[{"role":"user","content":"2+2?"}]}`)
	if status != http.StatusOK || !strings.Contains(raw, `"content":"4","reasoning_content":"2+2 is 4"`) {
		t.Fatalf("%d %s", status, raw)
	}
}
