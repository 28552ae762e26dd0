package providers

import (
	"context"
	"encoding/json"
	"net/http"
	"reflect"
	"testing"
	"time"

	"github.com/routerhq/router/internal/providers/anthropicfake"
)

func newAnthropicAdapter(t *testing.T, baseURL string, mod func(*AnthropicConfig)) *Anthropic {
	t.Helper()
	cfg := AnthropicConfig{Name: "claude", BaseURL: baseURL, APIKey: "sk-ant-test", Model: "claude-test"}
	if mod != nil {
		mod(&cfg)
	}
	p, err := NewAnthropic(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func fixedReply(r anthropicfake.Reply) func(anthropicfake.Request) anthropicfake.Reply {
	return func(anthropicfake.Request) anthropicfake.Reply { return r }
}

func TestAnthropicRequestTranslation(t *testing.T) {
	srv := anthropicfake.New(t, fixedReply(anthropicfake.Reply{Text: "ok", InputTokens: 3, OutputTokens: 1}))
	p := newAnthropicAdapter(t, srv.URL, nil)
	req := &Request{
		Messages: []Message{
			{Role: "system", Content: "be brief"},
			{Role: "user", Content: "weather in Paris?"},
			{Role: "assistant", ToolCalls: json.RawMessage(`[{"id":"call_1","type":"function","function":{"name":"weather","arguments":"{\"city\":\"Paris\"}"}}]`)},
			{Role: "tool", ToolCallID: "call_1", Content: "sunny"},
			{Role: "user", Content: "thanks"},
		},
		MaxTokens:      64,
		Stop:           []string{"\n\n", "END"},
		User:           "u-1",
		Tools:          json.RawMessage(`[{"type":"function","function":{"name":"weather","description":"get weather","parameters":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"],"additionalProperties":false}}}]`),
		ToolChoice:     json.RawMessage(`{"type":"function","function":{"name":"weather"}}`),
		ResponseFormat: &ResponseFormat{Type: "json_schema", Name: "out", Schema: []byte(`{"type":"object","properties":{"a":{"type":"integer"}}}`)},
	}
	if _, err := p.Complete(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	got := srv.Requests()
	if len(got) != 1 {
		t.Fatalf("%d requests", len(got))
	}
	h, b := got[0].Header, got[0].Body
	// The SDK sends the key as x-api-key or as a bearer token, by version.
	if (h.Get("x-api-key") != "sk-ant-test" && h.Get("Authorization") != "Bearer sk-ant-test") || h.Get("anthropic-version") == "" {
		t.Fatalf("headers: key %q / %q anthropic-version %q", h.Get("x-api-key"), h.Get("Authorization"), h.Get("anthropic-version"))
	}
	want := map[string]any{
		"model":          "claude-test",
		"max_tokens":     64.0,
		"stop_sequences": []any{"END"}, // "\n\n" is Anthropic's refusal: applied by the adapter
		"system":         []any{map[string]any{"type": "text", "text": "be brief"}},
		"metadata":       map[string]any{"user_id": "u-1"},
		"messages": []any{
			map[string]any{"role": "user", "content": []any{map[string]any{"type": "text", "text": "weather in Paris?"}}},
			map[string]any{"role": "assistant", "content": []any{map[string]any{"type": "tool_use", "id": "call_1", "name": "weather", "input": map[string]any{"city": "Paris"}}}},
			map[string]any{"role": "user", "content": []any{
				map[string]any{"type": "tool_result", "tool_use_id": "call_1", "is_error": false, "content": []any{map[string]any{"type": "text", "text": "sunny"}}},
				map[string]any{"type": "text", "text": "thanks"},
			}},
		},
		"tools": []any{map[string]any{"name": "weather", "description": "get weather", "input_schema": map[string]any{
			"type": "object", "properties": map[string]any{"city": map[string]any{"type": "string"}},
			"required": []any{"city"}, "additionalProperties": false}}},
		"tool_choice":   map[string]any{"type": "tool", "name": "weather"},
		"output_config": map[string]any{"format": map[string]any{"type": "json_schema", "schema": map[string]any{"type": "object", "properties": map[string]any{"a": map[string]any{"type": "integer"}}}}},
	}
	for k, v := range want {
		if !reflect.DeepEqual(b[k], v) {
			gj, _ := json.Marshal(b[k])
			wj, _ := json.Marshal(v)
			t.Errorf("%s:\n got %s\nwant %s", k, gj, wj)
		}
	}
	if _, ok := b["stream"]; ok {
		t.Error("non-streamed call sent stream")
	}
}

func TestAnthropicToolChoiceAndJSONObject(t *testing.T) {
	srv := anthropicfake.New(t, fixedReply(anthropicfake.Reply{Text: "{}"}))
	p := newAnthropicAdapter(t, srv.URL, nil)
	for _, c := range []struct {
		choice string
		want   map[string]any
	}{
		{`"auto"`, map[string]any{"type": "auto"}},
		{`"none"`, map[string]any{"type": "none"}},
		{`"required"`, map[string]any{"type": "any"}},
	} {
		req := testRequest()
		req.ToolChoice = json.RawMessage(c.choice)
		req.ResponseFormat = &ResponseFormat{Type: "json_object"}
		if _, err := p.Complete(context.Background(), req); err != nil {
			t.Fatal(err)
		}
		rs := srv.Requests()
		b := rs[len(rs)-1].Body
		if !reflect.DeepEqual(b["tool_choice"], c.want) {
			t.Errorf("tool_choice %s: got %v want %v", c.choice, b["tool_choice"], c.want)
		}
		sys := b["system"].([]any)
		if last := sys[len(sys)-1].(map[string]any)["text"]; last != JSONObjectInstruction {
			t.Errorf("json_object: last system block %q", last)
		}
		if b["max_tokens"] != float64(AnthropicDefaultMaxTokens) {
			t.Errorf("default max_tokens: %v", b["max_tokens"])
		}
		if s, ok := b["stop_sequences"]; ok {
			t.Errorf("a request without stop sent stop_sequences %v", s)
		}
	}
	req := testRequest()
	req.ToolChoice = json.RawMessage(`"sometimes"`)
	_, err := p.Complete(context.Background(), req)
	assertKind(t, err, KindBadRequest, FaultCaller, ActionStop, false)
}

func TestAnthropicResponses(t *testing.T) {
	reply := anthropicfake.Reply{Text: `{"a":1}`, ToolName: "weather", ToolInput: `{"city":"Paris"}`,
		Model: "claude-test-20260101", InputTokens: 11, OutputTokens: 5}
	srv := anthropicfake.New(t, fixedReply(reply))
	for _, stream := range []bool{false, true} {
		p := newAnthropicAdapter(t, srv.URL, func(c *AnthropicConfig) { c.Stream = stream })
		var d deltaLog
		resp, err := p.CompleteStream(context.Background(), testRequest(), d.add)
		if !stream {
			resp, err = p.Complete(context.Background(), testRequest())
		}
		if err != nil {
			t.Fatalf("stream=%v: %v", stream, err)
		}
		if resp.Content != `{"a":1}` || resp.Model != "claude-test-20260101" || resp.ResponseID != "msg_fake1" || resp.FinishReason != "tool_calls" {
			t.Fatalf("stream=%v: %+v", stream, resp)
		}
		if resp.Usage != (Usage{PromptTokens: 11, CompletionTokens: 5, TotalTokens: 16}) {
			t.Fatalf("stream=%v usage %+v", stream, resp.Usage)
		}
		var calls []map[string]any
		if err := json.Unmarshal(resp.ToolCalls, &calls); err != nil || len(calls) != 1 {
			t.Fatalf("tool calls %s: %v", resp.ToolCalls, err)
		}
		fn := calls[0]["function"].(map[string]any)
		if calls[0]["id"] != "toolu_fake1" || calls[0]["type"] != "function" || fn["name"] != "weather" || fn["arguments"] != `{"city":"Paris"}` {
			t.Fatalf("tool call %v", calls[0])
		}
		if got := d.joined(); got != `{"a":1}` {
			t.Fatalf("deltas %q", got)
		}
	}
	rs := srv.Requests()
	if rs[len(rs)-1].Body["stream"] != true {
		t.Fatal("streamed call did not send stream: true")
	}
}

func TestAnthropicHTTPErrors(t *testing.T) {
	rows := []struct {
		name       string
		reply      anthropicfake.Reply
		kind       Kind
		fault      Fault
		action     Action
		code       string
		retryAfter time.Duration
	}{
		{"400 invalid request", anthropicfake.Reply{Status: 400, ErrorType: "invalid_request_error", ErrorMessage: "max_tokens: field required"},
			KindBadRequest, FaultCaller, ActionStop, "invalid_request_error", 0},
		{"400 prompt too long", anthropicfake.Reply{Status: 400, ErrorType: "invalid_request_error", ErrorMessage: "prompt is too long: 210000 tokens > 200000 maximum"},
			KindContextLength, FaultCaller, ActionFailover, "invalid_request_error", 0},
		{"401 authentication", anthropicfake.Reply{Status: 401, ErrorType: "authentication_error", ErrorMessage: "invalid x-api-key"},
			KindAuth, FaultRouter, ActionFailover, "authentication_error", 0},
		{"402 billing", anthropicfake.Reply{Status: 402, ErrorType: "billing_error", ErrorMessage: "credit balance too low"},
			KindQuotaExceeded, FaultRouter, ActionFailover, "billing_error", 0},
		{"403 permission", anthropicfake.Reply{Status: 403, ErrorType: "permission_error", ErrorMessage: "no access to model"},
			KindAuth, FaultRouter, ActionFailover, "permission_error", 0},
		{"404 not found", anthropicfake.Reply{Status: 404, ErrorType: "not_found_error", ErrorMessage: "model: claude-test"},
			KindModelNotFound, FaultRouter, ActionFailover, "not_found_error", 0},
		{"413 request too large", anthropicfake.Reply{Status: 413, ErrorType: "request_too_large", ErrorMessage: "Request exceeds the maximum allowed number of bytes"},
			KindBadRequest, FaultCaller, ActionStop, "request_too_large", 0},
		{"429 rate limit retry-after", anthropicfake.Reply{Status: 429, ErrorType: "rate_limit_error", ErrorMessage: "Number of request tokens has exceeded your per-minute rate limit", Header: map[string]string{"retry-after": "7"}},
			KindRateLimited, FaultProvider, ActionRetry, "rate_limit_error", 7 * time.Second},
		{"429 spend limit", anthropicfake.Reply{Status: 429, ErrorType: "rate_limit_error", ErrorMessage: "spend limit reached", ErrorCode: "enforced_spend_limit_reached"},
			KindQuotaExceeded, FaultRouter, ActionFailover, "enforced_spend_limit_reached", 0},
		{"500 api error", anthropicfake.Reply{Status: 500, ErrorType: "api_error", ErrorMessage: "Internal server error"},
			KindServerError, FaultProvider, ActionRetry, "api_error", 0},
		{"504 timeout error", anthropicfake.Reply{Status: 504, ErrorType: "timeout_error", ErrorMessage: "Request timed out"},
			KindGatewayTimeout, FaultProvider, ActionRetry, "timeout_error", 0},
		{"529 overloaded", anthropicfake.Reply{Status: 529, ErrorType: "overloaded_error", ErrorMessage: "Overloaded", Header: map[string]string{"retry-after": "2"}},
			KindUnavailable, FaultProvider, ActionRetry, "overloaded_error", 2 * time.Second},
		{"529 without a type", anthropicfake.Reply{Status: 529, ErrorType: "", ErrorMessage: "Overloaded"},
			KindUnavailable, FaultProvider, ActionRetry, "", 0},
	}
	for _, stream := range []bool{false, true} {
		for _, r := range rows {
			name := r.name + map[bool]string{false: "/complete", true: "/stream"}[stream]
			t.Run(name, func(t *testing.T) {
				srv := anthropicfake.New(t, fixedReply(r.reply))
				p := newAnthropicAdapter(t, srv.URL, func(c *AnthropicConfig) { c.Stream = stream })
				_, err := p.Complete(context.Background(), testRequest())
				e := assertKind(t, err, r.kind, r.fault, r.action, false)
				if e.StatusCode != r.reply.Status || e.Code != r.code || e.RetryAfter != r.retryAfter {
					t.Fatalf("status %d code %q retryAfter %s; want %d %q %s", e.StatusCode, e.Code, e.RetryAfter, r.reply.Status, r.code, r.retryAfter)
				}
				// A failure about the router's own account keeps the
				// provider's message for the log only (operatorsOwn).
				_, own := operatorsMessages[r.kind]
				if got := map[bool]string{false: e.Message, true: e.ProviderMessage}[own]; r.reply.ErrorMessage != "" && got != r.reply.ErrorMessage {
					t.Fatalf("message %q, provider message %q", e.Message, e.ProviderMessage)
				}
			})
		}
	}
}

func TestAnthropicStreamFaults(t *testing.T) {
	stream := func(c *AnthropicConfig) { c.Stream = true }
	t.Run("overloaded error event", func(t *testing.T) {
		srv := anthropicfake.New(t, fixedReply(anthropicfake.Reply{Text: "hello", StreamError: "overloaded_error"}))
		_, err := newAnthropicAdapter(t, srv.URL, stream).Complete(context.Background(), testRequest())
		e := assertKind(t, err, KindUnavailable, FaultProvider, ActionRetry, false)
		if e.Code != "overloaded_error" {
			t.Fatalf("code %q", e.Code)
		}
	})
	t.Run("rate limit error event", func(t *testing.T) {
		srv := anthropicfake.New(t, fixedReply(anthropicfake.Reply{Text: "hello", StreamError: "rate_limit_error"}))
		_, err := newAnthropicAdapter(t, srv.URL, stream).Complete(context.Background(), testRequest())
		assertKind(t, err, KindRateLimited, FaultProvider, ActionRetry, false)
	})
	t.Run("cut without message_stop", func(t *testing.T) {
		srv := anthropicfake.New(t, fixedReply(anthropicfake.Reply{Text: "hello world", CutAfterText: true}))
		var d deltaLog
		resp, err := newAnthropicAdapter(t, srv.URL, nil).CompleteStream(context.Background(), testRequest(), d.add)
		if resp != nil {
			t.Fatal("cut stream returned a response")
		}
		if e := assertKind(t, err, KindStreamCut, FaultProvider, ActionFailover, false); !e.Received {
			t.Fatal("a stream cut after its first events is not marked Received (its outcome is known)")
		}
		if d.joined() != "hello" {
			t.Fatalf("deltas %q", d.joined())
		}
	})
	t.Run("malformed event", func(t *testing.T) {
		srv := anthropicfake.New(t, fixedReply(anthropicfake.Reply{Text: "hello", Malformed: true}))
		_, err := newAnthropicAdapter(t, srv.URL, stream).Complete(context.Background(), testRequest())
		if e := assertKind(t, err, KindStreamMalformed, FaultProvider, ActionFailover, false); !e.Received {
			t.Fatal("a malformed event after the stream began is not marked Received")
		}
	})
	t.Run("stall between events", func(t *testing.T) {
		srv := anthropicfake.New(t, fixedReply(anthropicfake.Reply{Text: "hello world", BlockAfter: true}))
		p := newAnthropicAdapter(t, srv.URL, func(c *AnthropicConfig) {
			c.Stream, c.StreamIdleTimeout, c.Timeout = true, 50*time.Millisecond, time.Minute
		})
		_, err := p.Complete(context.Background(), testRequest())
		assertKind(t, err, KindStreamStalled, FaultProvider, ActionFailover, false)
	})
	t.Run("total deadline after the response began is known", func(t *testing.T) {
		srv := anthropicfake.New(t, fixedReply(anthropicfake.Reply{Text: "hello world", BlockAfter: true}))
		p := newAnthropicAdapter(t, srv.URL, func(c *AnthropicConfig) { c.Stream, c.Timeout = true, 100*time.Millisecond })
		_, err := p.Complete(context.Background(), testRequest())
		// The provider had answered, so the outcome is known (SPEC §15). The
		// kind is stream_timeout, as for every adapter: both share CallWatch
		// (this adapter's own deadlines used to say timeout with a known
		// outcome); see TestDeadlinesAgreeAcrossAdapters.
		e := assertKind(t, err, KindStreamTimeout, FaultProvider, ActionFailover, false)
		if !e.Received {
			t.Fatalf("a stream cut by the total timeout after its headers is not marked Received: %+v", e)
		}
	})
	t.Run("no first byte is unknown", func(t *testing.T) {
		srv := newFakeServer(t, nil)
		release := releaseAtCleanup(t)
		srv.Config.Handler = blockHandler(release)
		// The first-byte deadline passes once the request was sent
		// (firstByteOnceSent), not after 50 ms that a loaded machine spent
		// connecting.
		p := newAnthropicAdapter(t, srv.URL, func(c *AnthropicConfig) {
			c.Stream, c.FirstByteTimeout, c.Timeout = true, time.Hour, 2*time.Hour
		})
		_, err := p.Complete(firstByteOnceSent(t, context.Background()), testRequest())
		assertKind(t, err, KindTimeout, FaultNetwork, ActionFailover, true)
	})
	t.Run("refusal", func(t *testing.T) {
		srv := anthropicfake.New(t, fixedReply(anthropicfake.Reply{Text: "I can't", StopReason: "refusal"}))
		_, err := newAnthropicAdapter(t, srv.URL, stream).Complete(context.Background(), testRequest())
		assertKind(t, err, KindContentPolicy, FaultCaller, ActionStop, false)
	})
	t.Run("connection refused", func(t *testing.T) {
		_, err := newAnthropicAdapter(t, "http://"+closedAddr(t), stream).Complete(context.Background(), testRequest())
		assertKind(t, err, KindConnRefused, FaultNetwork, ActionRetry, false)
	})
}

func TestAnthropicConfigErrors(t *testing.T) {
	if _, err := NewAnthropic(AnthropicConfig{}); err == nil {
		t.Fatal("no name accepted")
	}
	if _, err := NewAnthropic(AnthropicConfig{Name: "a", BaseURL: "api.anthropic.com"}); err == nil {
		t.Fatal("relative base URL accepted")
	}
	p, err := NewAnthropic(AnthropicConfig{Name: "a"})
	if err != nil || p.cfg.BaseURL != AnthropicBaseURL || p.cfg.MaxTokens != AnthropicDefaultMaxTokens {
		t.Fatalf("defaults: %+v %v", p, err)
	}
}

// blockHandler accepts a request and answers nothing until release or the
// client goes away.
func blockHandler(release <-chan struct{}) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}
}
