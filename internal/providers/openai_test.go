package providers

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"
)

// capture records the JSON body and headers of the last request a fake server saw.
type capture struct {
	body   map[string]any
	header http.Header
}

func completionServer(t *testing.T, c *capture, body string) string {
	srv := newFakeServer(t, func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.URL.Path != "/v1/chat/completions" {
			t.Errorf("unexpected %s %s", r.Method, r.URL.Path)
		}
		c.header = r.Header.Clone()
		if err := json.NewDecoder(r.Body).Decode(&c.body); err != nil {
			t.Errorf("decode request: %v", err)
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, body)
	})
	return srv.URL + "/v1"
}

func TestOpenAICompleteSuccess(t *testing.T) {
	var c capture
	url := completionServer(t, &c, completionBody)
	p := newTestAdapter(t, url, func(cfg *OpenAIConfig) { cfg.SupportsLookup = true; cfg.Organization = "org-x" })

	temp, seed := float32(0.2), 42
	schema := `{"type":"object","properties":{"a":{"type":"integer"}},"required":["a"],"additionalProperties":false}`
	req := testRequest()
	req.Model = "gpt-override"
	req.Temperature = &temp
	req.MaxTokens = 256
	req.Seed = &seed
	req.User = "user-7"
	req.ResponseFormat = &ResponseFormat{Type: "json_schema", Name: "answer", Schema: []byte(schema), Strict: true}

	resp, err := p.Complete(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	want := Response{Content: `{"a":1}`, Model: "gpt-test-0613", ResponseID: "chatcmpl-1", FinishReason: "stop",
		Created: time.Unix(1700000000, 0), Usage: Usage{PromptTokens: 11, CompletionTokens: 5, TotalTokens: 16}}
	if resp.FirstByte <= 0 {
		t.Fatalf("time to first byte not measured: %+v", *resp)
	}
	resp.FirstByte = 0
	if !reflect.DeepEqual(*resp, want) {
		t.Fatalf("got %+v\nwant %+v", *resp, want)
	}

	var wantSchema any
	json.Unmarshal([]byte(schema), &wantSchema)
	checks := map[string]any{
		"model":      "gpt-override",
		"max_tokens": float64(256),
		"seed":       float64(42),
		"user":       "user-7",
		"stream":     false,
		"store":      true,
		"messages": []any{
			map[string]any{"role": "system", "content": "be brief"},
			map[string]any{"role": "user", "content": "hi"},
		},
		"metadata": map[string]any{"router_attempt_id": "att-1", "router_job_id": "job-1"},
		"response_format": map[string]any{"type": "json_schema", "json_schema": map[string]any{
			"name": "answer", "schema": wantSchema, "strict": true,
		}},
	}
	for k, v := range checks {
		if !reflect.DeepEqual(c.body[k], v) {
			t.Errorf("request %s = %#v, want %#v", k, c.body[k], v)
		}
	}
	if tv, _ := c.body["temperature"].(float64); tv < 0.19 || tv > 0.21 {
		t.Errorf("temperature %v", c.body["temperature"])
	}
	if got := c.header.Get("Authorization"); got != "Bearer sk-test" {
		t.Errorf("Authorization %q", got)
	}
	if got := c.header.Get("OpenAI-Organization"); got != "org-x" {
		t.Errorf("OpenAI-Organization %q", got)
	}
	for h := range c.header {
		if strings.Contains(strings.ToLower(h), "idempotency") {
			t.Errorf("unexpected idempotency header %s", h)
		}
	}
}

func TestOpenAICompleteWithoutLookup(t *testing.T) {
	var c capture
	url := completionServer(t, &c, completionBody)
	p := newTestAdapter(t, url, nil)
	zero := float32(0)
	req := testRequest()
	req.Temperature = &zero
	if _, err := p.Complete(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"store", "metadata", "response_format", "max_tokens", "seed"} {
		if _, ok := c.body[k]; ok {
			t.Errorf("request has %s without SupportsLookup/without being asked: %v", k, c.body[k])
		}
	}
	if c.body["model"] != "gpt-test" {
		t.Errorf("model %v, want the configured one", c.body["model"])
	}
	// A zero temperature must reach the provider as 0, not be dropped.
	if tv, ok := c.body["temperature"].(float64); !ok || tv != 0 {
		t.Errorf("temperature %v", c.body["temperature"])
	}
	if LookerOf(p); p.SupportsLookup() {
		t.Error("SupportsLookup without the config")
	}
	if _, ok := LookerOf(p); ok {
		t.Error("LookerOf found a looker on an adapter without lookup")
	}
}

func TestOpenAICompleteBadAnswers(t *testing.T) {
	rows := []struct {
		name string
		body string
		kind Kind
	}{
		{"no choices", `{"id":"x","object":"chat.completion","created":1,"model":"m","choices":[],"usage":{}}`, KindEmptyResponse},
		{"content filter", `{"id":"x","created":1,"model":"m","choices":[{"index":0,"message":{"role":"assistant","content":""},"finish_reason":"content_filter"}]}`, KindContentPolicy},
		{"refusal", `{"id":"x","created":1,"model":"m","choices":[{"index":0,"message":{"role":"assistant","content":null,"refusal":"I can't help with that."},"finish_reason":"stop"}]}`, KindContentPolicy},
		{"undecodable body", `{"id":"x","choices":[`, KindMalformedResponse},
	}
	for _, r := range rows {
		t.Run(r.name, func(t *testing.T) {
			var c capture
			p := newTestAdapter(t, completionServer(t, &c, r.body), nil)
			resp, err := p.Complete(context.Background(), testRequest())
			if resp != nil {
				t.Fatalf("got a response: %+v", resp)
			}
			if e := mustError(t, err); e.Kind != r.kind {
				t.Fatalf("kind %s, want %s (%v)", e.Kind, r.kind, e)
			}
		})
	}
}

func TestOpenAIRequestValidation(t *testing.T) {
	p := newTestAdapter(t, "http://127.0.0.1:1/v1", func(c *OpenAIConfig) { c.Model = "" })
	_, err := p.Complete(context.Background(), testRequest())
	assertKind(t, err, KindMisconfigured, FaultRouter, ActionFailover, false)

	p = newTestAdapter(t, "http://127.0.0.1:1/v1", nil)
	req := testRequest()
	req.ResponseFormat = &ResponseFormat{Type: "json_schema", Schema: []byte(`{not json`)}
	_, err = p.Complete(context.Background(), req)
	assertKind(t, err, KindMisconfigured, FaultRouter, ActionStop, false)
}

func TestNewOpenAIValidation(t *testing.T) {
	rows := []struct {
		cfg  OpenAIConfig
		want string
	}{
		{OpenAIConfig{BaseURL: "https://api.openai.com/v1"}, "needs a Name"},
		{OpenAIConfig{Name: "x"}, "needs a BaseURL"},
		{OpenAIConfig{Name: "x", BaseURL: "api.openai.com/v1"}, "not an absolute http(s) URL"},
		{OpenAIConfig{Name: "x", BaseURL: "https://api.openai.com/v1", Timeout: -1}, "must be >= 0"},
	}
	for _, r := range rows {
		if _, err := NewOpenAI(r.cfg); err == nil || !strings.Contains(err.Error(), r.want) {
			t.Errorf("NewOpenAI(%+v) = %v, want error containing %q", r.cfg, err, r.want)
		}
	}
	base := &http.Client{Timeout: time.Second}
	p, err := NewOpenAI(OpenAIConfig{Name: "x", BaseURL: "https://api.openai.com/v1", HTTPClient: base})
	if err != nil || p.Name() != "x" {
		t.Fatalf("valid config: %v", err)
	}
	if base.Transport != nil {
		t.Fatal("the caller's http.Client was modified")
	}
}

func TestOpenAILookup(t *testing.T) {
	srv := newFakeServer(t, func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet || r.URL.Path != "/v1/chat/completions" || r.URL.Query().Get("limit") != "1" {
			t.Errorf("unexpected %s %s", r.Method, r.URL)
		}
		if r.Header.Get("Authorization") != "Bearer sk-test" {
			t.Errorf("no auth")
		}
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Query().Get("metadata[router_attempt_id]") {
		case "att-done":
			// A stored completion carries the metadata it was sent with.
			stored := strings.Replace(completionBody, `"object":"chat.completion",`, `"object":"chat.completion","metadata":{"router_attempt_id":"att-done"},`, 1)
			fmt.Fprintf(w, `{"object":"list","data":[%s],"first_id":"chatcmpl-1","last_id":"chatcmpl-1","has_more":false}`, stored)
		case "att-limited":
			writeError(w, 429, map[string]string{"Retry-After": "3"}, apiErrorBody("Rate limit reached.", "requests", nil, "rate_limit_exceeded"))
		default:
			fmt.Fprint(w, `{"object":"list","data":[],"first_id":null,"last_id":null,"has_more":false}`)
		}
	})
	p := newTestAdapter(t, srv.URL+"/v1", func(c *OpenAIConfig) { c.SupportsLookup = true })
	l, ok := LookerOf(p)
	if !ok {
		t.Fatal("LookerOf: no looker with SupportsLookup")
	}
	resp, found, err := l.Lookup(context.Background(), "att-done")
	if err != nil || !found || resp.Content != `{"a":1}` || resp.ResponseID != "chatcmpl-1" {
		t.Fatalf("lookup done: %+v %v %v", resp, found, err)
	}
	resp, found, err = l.Lookup(context.Background(), "att-missing")
	if err != nil || found || resp != nil {
		t.Fatalf("lookup missing: %+v %v %v", resp, found, err)
	}
	_, _, err = l.Lookup(context.Background(), "att-limited")
	if e := assertKind(t, err, KindRateLimited, FaultProvider, ActionRetry, false); e.RetryAfter != 3*time.Second {
		t.Fatalf("retry after %v", e.RetryAfter)
	}

	off := newTestAdapter(t, srv.URL+"/v1", nil)
	_, _, err = off.Lookup(context.Background(), "att-done")
	assertKind(t, err, KindMisconfigured, FaultRouter, ActionStop, false)
}
