package e2e_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/routerhq/router/internal/store"
	"github.com/routerhq/router/internal/testdb"
)

// fault is one provider fault of the suite (issue 12), injected by faultLLM on
// the primary target's model; the fallback target is model+"-f".
type fault struct {
	model  string
	stream bool   // the caller streams
	prefix string // an assistant prefill after the user message
	// Expected: the model whose whole answer the caller gets, or the 4xx code.
	answeredBy string
	status     int
	code       string
	// Bounds of calls per target.
	maxPrimary, maxFallback int
}

var faults = []fault{
	{model: "rl-after", answeredBy: "rl-after", maxPrimary: 2, maxFallback: 0},                     // 429 with Retry-After: retried after it
	{model: "rl-plain", answeredBy: "rl-plain", maxPrimary: 2, maxFallback: 0},                     // 429 without: retried with backoff
	{model: "once500", answeredBy: "once500", maxPrimary: 2, maxFallback: 0},                       // 500 once: retried
	{model: "down503", answeredBy: "down503-f", maxPrimary: 2, maxFallback: 1},                     // persistent 503: one retry, then failover
	{model: "reset", answeredBy: "reset-f", maxPrimary: 2, maxFallback: 1},                         // TCP reset before any byte
	{model: "silent", answeredBy: "silent-f", maxPrimary: 1, maxFallback: 1},                       // accepts, never answers: the default hedge
	{model: "slow-first", stream: true, answeredBy: "slow-first-f", maxPrimary: 1, maxFallback: 1}, // first token after 20 s
	{model: "cut", stream: true, answeredBy: "cut-f", maxPrimary: 1, maxFallback: 1},               // stream cut mid-answer
	{model: "stall", stream: true, answeredBy: "stall-f", maxPrimary: 1, maxFallback: 1},           // stream stalls mid-answer
	{model: "malformed", answeredBy: "malformed-f", maxPrimary: 1, maxFallback: 1},                 // undecodable chunk
	{model: "nodone", answeredBy: "nodone", maxPrimary: 1, maxFallback: 0},                         // no data: [DONE] after finish_reason
	{model: "ctxlen", status: 400, code: "context_length_exceeded", maxPrimary: 1, maxFallback: 0},
	{model: "filter", status: 400, code: "content_policy_violation", maxPrimary: 1, maxFallback: 0},
	// The primary is slow (hedged at the default 10 s); the hedge's target
	// refuses the assistant prefill with a 400; the primary's answer still wins.
	{model: "prefill", prefix: "answer from", answeredBy: "prefill", maxPrimary: 1, maxFallback: 1},
	{model: "usage", answeredBy: "usage-f", maxPrimary: 1, maxFallback: 1}, // usage is the answering attempt's, after failover
}

// faultConfig names only providers and route targets: every deadline, retry,
// streaming and hedging setting is the router's default.
func faultConfig(addr, dbURL, llmURL string) string {
	var b strings.Builder
	fmt.Fprintf(&b, `listen: %s
ops_listen: 127.0.0.1:0
database_url: %q
api_keys: [{owner: acme, key_env: E2E_API_KEY}]
providers:
  - {name: primary, type: openai, base_url: %q}
  - {name: fallback, type: openai, base_url: %q}
log: {level: warn}
routes:
`, addr, dbURL, llmURL, llmURL)
	for _, m := range append(modelsOf(faults), "flap") {
		fmt.Fprintf(&b, "  %s: {targets: [{provider: primary, model: %s}, {provider: fallback, model: %s-f}]}\n", m, m, m)
	}
	return b.String()
}

func modelsOf(fs []fault) []string {
	var out []string
	for _, f := range fs {
		out = append(out, f.model)
	}
	return out
}

// The sixteen faults of issue 12 against the defaults: a valid whole answer
// (or the right 4xx without failover), calls per target bounded, and a
// flapping primary probed, not hammered, while its breaker is open.
func TestProviderFaultsWithDefaults(t *testing.T) {
	llm := newFaultLLM(t)
	db := testdb.New(t, store.Options{})
	addr := freeAddr(t)
	router := launch(t, addr, faultConfig(addr, db.URL, llm.url()))

	t.Run("faults", func(t *testing.T) {
		for _, f := range faults {
			t.Run(f.model, func(t *testing.T) {
				t.Parallel()
				msgs := []map[string]string{{"role": "user", "content": "Say the sentence about the fox."}}
				if f.prefix != "" {
					msgs = append(msgs, map[string]string{"role": "assistant", "content": f.prefix})
				}
				got := chatCall(t, router, f.model, msgs, f.stream)
				switch {
				case f.status != 0:
					if got.status != f.status || got.code != f.code {
						t.Errorf("status %d code %q, want %d %q (%s)", got.status, got.code, f.status, f.code, got.message)
					}
				case got.status != http.StatusOK || got.content != answerFor(f.answeredBy):
					t.Errorf("status %d content %q (error %q), want the whole answer of %s", got.status, got.content, got.message, f.answeredBy)
				}
				if f.model == "usage" {
					want := usageFor("usage-f")
					if got.usage["prompt_tokens"] != want["prompt_tokens"] || got.usage["completion_tokens"] != want["completion_tokens"] ||
						got.usage["total_tokens"] != want["total_tokens"] {
						t.Errorf("usage %v, want the answering attempt's %v", got.usage, want)
					}
				}
				if p, fb := llm.count(f.model), llm.count(f.model+"-f"); p < 1 || p > f.maxPrimary || fb > f.maxFallback {
					t.Errorf("calls: primary %d (max %d), fallback %d (max %d)", p, f.maxPrimary, fb, f.maxFallback)
				}
			})
		}

		// A flapping primary: its first five calls fail (the default breaker
		// opens after five consecutive failures), then it recovers. While the
		// breaker is open (the default 30 s) jobs go to the fallback without
		// calling the primary; the half-open probe finds it back.
		t.Run("flap", func(t *testing.T) {
			t.Parallel()
			msgs := []map[string]string{{"role": "user", "content": "Say the sentence about the fox."}}
			pace := time.NewTicker(500 * time.Millisecond)
			defer pace.Stop()
			whileOpen := 0
			for i := 0; ; i++ {
				got := chatCall(t, router, "flap", msgs, false)
				if got.status != http.StatusOK {
					t.Fatalf("job %d: status %d %s", i, got.status, got.message)
				}
				if got.content == answerFor("flap") {
					break
				}
				if got.content != answerFor("flap-f") {
					t.Fatalf("job %d: content %q", i, got.content)
				}
				if llm.count("flap") >= 5 {
					whileOpen++
				}
				if i > 200 {
					t.Fatalf("the primary was never probed back: %d calls", llm.count("flap"))
				}
				<-pace.C
			}
			// Five failures, then one probe that succeeded; nothing in between.
			if n := llm.count("flap"); n != 6 || whileOpen < 2 {
				t.Errorf("primary calls %d (want 5 failures + 1 probe); jobs served while its breaker was open: %d", n, whileOpen)
			}
		})
	})
}

type chatResult struct {
	status        int
	code, message string
	content       string
	usage         map[string]int
}

// chatCall makes one chat completion on route, streamed or not, and returns
// what the caller got; a streamed answer is assembled from its chunks.
func chatCall(t *testing.T, p *routerProc, route string, msgs []map[string]string, stream bool) chatResult {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"model": route, "messages": msgs, "stream": stream})
	req, _ := http.NewRequest(http.MethodPost, p.base+"/v1/chat/completions", strings.NewReader(string(body)))
	req.Header.Set("Authorization", "Bearer "+apiKey)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("chat call: %v", err)
	}
	defer resp.Body.Close()
	res := chatResult{status: resp.StatusCode}
	var answer struct {
		Choices []struct {
			Message struct{ Content string } `json:"message"`
			Delta   struct{ Content string } `json:"delta"`
		} `json:"choices"`
		// The counts; usage also has the *_tokens_details objects.
		Usage struct {
			PromptTokens     int `json:"prompt_tokens"`
			CompletionTokens int `json:"completion_tokens"`
			TotalTokens      int `json:"total_tokens"`
		} `json:"usage"`
		Error *struct {
			Code    string `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if !stream || resp.StatusCode != http.StatusOK {
		if err := json.NewDecoder(resp.Body).Decode(&answer); err != nil {
			t.Fatalf("decode answer: %v", err)
		}
		if answer.Error != nil {
			res.code, res.message = answer.Error.Code, answer.Error.Message
		}
		if len(answer.Choices) > 0 {
			res.content = answer.Choices[0].Message.Content
		}
		u := answer.Usage
		res.usage = map[string]int{"prompt_tokens": u.PromptTokens, "completion_tokens": u.CompletionTokens, "total_tokens": u.TotalTokens}
		return res
	}
	lines := bufio.NewScanner(resp.Body)
	var content strings.Builder
	done := false
	for lines.Scan() {
		data, ok := strings.CutPrefix(lines.Text(), "data: ")
		if !ok {
			continue // blank lines and the keep-alive comments
		}
		if data == "[DONE]" {
			done = true
			break
		}
		answer.Choices, answer.Error = nil, nil
		if err := json.Unmarshal([]byte(data), &answer); err != nil {
			t.Fatalf("undecodable chunk %q", data)
		}
		if answer.Error != nil {
			res.status, res.code, res.message = 0, answer.Error.Code, answer.Error.Message
			return res
		}
		for _, c := range answer.Choices {
			content.WriteString(c.Delta.Content)
		}
	}
	if !done {
		t.Errorf("stream ended without data: [DONE] after %q", content.String())
	}
	res.content = content.String()
	return res
}
