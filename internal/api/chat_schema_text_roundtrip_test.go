package api_test

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/routerhq/router/internal/providers"
)

// A chat json_schema answer is stored as text (the completion's
// message.content), so an answer holding what jsonb could not hold as a
// JSON value — the escape \u0000, a lone surrogate escape, the number
// 1e2000 — wins, and the completion, stored in PostgreSQL and replayed from
// there, carries the model's text byte for byte.
func TestChatSchemaAnswerUnstorableAsJSONRoundTripsAsText(t *testing.T) {
	answers := []string{
		`{"s":"C strings end with \u0000"}`,
		`{"s":"half an emoji: \ud83d"}`,
		`{"n":1e2000}`,
	}
	b := setup(t, options{respond: func(_ int, req *providers.Request) providers.Step {
		for _, a := range answers {
			if req.Messages[len(req.Messages)-1].Content == "say "+a {
				return providers.Step{Output: a}
			}
		}
		return providers.Step{Output: "{}"}
	}})
	for i, a := range answers {
		prompt, _ := json.Marshal("say " + a)
		body := `{"model":"default","messages":[{"role":"user","content":` + string(prompt) + `}],` +
			`"response_format":{"type":"json_schema","json_schema":{"name":"r","schema":{"type":"object","properties":{"s":{"type":"string"},"n":{"type":"number"}}}}}}`
		post := func() reply {
			return b.do(t, "POST", "/v1/chat/completions", acmeKey, body, "Idempotency-Key", fmt.Sprintf("text-%d", i))
		}
		first, replay := post(), post()
		if first.status != 200 || replay.status != 200 || replay.header.Get("Idempotent-Replayed") != "true" {
			t.Fatalf("%s: statuses %d %d, replayed %q: %s", a, first.status, replay.status, replay.header.Get("Idempotent-Replayed"), first.raw)
		}
		if string(first.raw) != string(replay.raw) {
			t.Errorf("%s: first answer and replay differ:\n%s\n%s", a, first.raw, replay.raw)
		}
		var c struct {
			Choices []struct {
				Message struct{ Content string } `json:"message"`
			} `json:"choices"`
		}
		if err := json.Unmarshal(replay.raw, &c); err != nil || len(c.Choices) != 1 || c.Choices[0].Message.Content != a {
			t.Errorf("replayed content %+v (%v), want %s byte for byte, in %s", c, err, a, replay.raw)
		}
	}
}
