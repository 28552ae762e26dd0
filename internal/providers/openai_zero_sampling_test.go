package providers

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"testing"
	"time"
)

// zeroSamplingServer answers every chat completion (streamed or not) and
// hands the raw request body it received to bodies.
func zeroSamplingServer(t *testing.T, bodies chan<- []byte) string {
	t.Helper()
	srv := newFakeServer(t, func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			t.Errorf("read request body: %v", err)
		}
		bodies <- body
		var head struct{ Stream bool }
		_ = json.Unmarshal(body, &head)
		if !head.Stream {
			w.Header().Set("Content-Type", "application/json")
			_, _ = io.WriteString(w, completionBody)
			return
		}
		startStream(w)
		sse(w,
			chunk(`{"a":1}`, ""), chunk("", "stop"),
			`{"id":"chatcmpl-s","object":"chat.completion.chunk","created":1700000001,"model":"gpt-test-0613","choices":[],"usage":{"prompt_tokens":12,"completion_tokens":4,"total_tokens":16}}`,
			"[DONE]")
	})
	return srv.URL
}

// sentMembers sends req through p (streamed or not) and returns the top-level
// members of the body the provider received, as their raw JSON.
func sentMembers(t *testing.T, p *OpenAI, bodies <-chan []byte, req *Request, streamed bool) (map[string]json.RawMessage, []byte) {
	t.Helper()
	var err error
	if streamed {
		_, err = p.CompleteStream(context.Background(), req, nil)
	} else {
		_, err = p.Complete(context.Background(), req)
	}
	if err != nil {
		t.Fatalf("streamed %v: %v", streamed, err)
	}
	var raw []byte
	select {
	case raw = <-bodies:
	default:
		t.Fatalf("streamed %v: the server received no request", streamed)
	}
	members := map[string]json.RawMessage{}
	if err := json.Unmarshal(raw, &members); err != nil {
		t.Fatalf("streamed %v: request body %s: %v", streamed, raw, err)
	}
	return members, raw
}

// A caller's temperature or top_p of 0 reaches an OpenAI-compatible provider
// as the JSON number 0 — not left out (the provider's default, usually 1),
// and not the smallest positive float32 (1e-45), which a llama.cpp server or
// Ollama divides the logits by (overflowing them) instead of decoding
// greedily — whichever way the body is written: by appendChatBody, or by
// chatBodyJSON for a request it does not write (tools, a prompt cache key,
// a top_p).
func TestZeroTemperatureAndTopPAreSentAsZero(t *testing.T) {
	zero := float32(0)
	tools := json.RawMessage(`[{"type":"function","function":{"name":"lookup"}}]`)
	cases := []struct {
		name      string
		mod       func(*Request)
		fastPath  bool // appendChatBody writes it (else chatBodyJSON)
		wantTopP0 bool
	}{
		{name: "temperature 0", mod: func(r *Request) {}, fastPath: true},
		{name: "temperature 0 with tools", mod: func(r *Request) { r.Tools = tools }},
		{name: "temperature 0 with a prompt cache key", mod: func(r *Request) { r.PromptCacheKey = "k" }},
		{name: "temperature 0 and top_p 0", mod: func(r *Request) { r.TopP = &zero }, wantTopP0: true},
		{name: "top_p 0 with tools, no temperature", mod: func(r *Request) { r.Temperature, r.TopP, r.Tools = nil, &zero, tools }, wantTopP0: true},
	}
	for _, c := range cases {
		for _, streamed := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/streamed=%v", c.name, streamed), func(t *testing.T) {
				bodies := make(chan []byte, 1)
				p := newTestAdapter(t, zeroSamplingServer(t, bodies), func(cfg *OpenAIConfig) { cfg.StreamIdleTimeout = time.Minute })
				req := testRequest()
				req.Temperature = &zero
				c.mod(req)
				creq, perr := p.chatRequest(req)
				if perr != nil {
					t.Fatal(perr)
				}
				// wire leaves a request with a prompt cache key to chatBodyJSON
				if _, fast := appendChatBody(nil, &creq); fast != c.fastPath && req.PromptCacheKey == "" {
					t.Fatalf("appendChatBody writes it: %v, want %v (the case no longer covers the path it names)", fast, c.fastPath)
				}
				members, raw := sentMembers(t, p, bodies, req, streamed)
				if req.Temperature != nil {
					if got, ok := members["temperature"]; !ok || string(got) != "0" {
						t.Errorf("temperature sent as %s (present %v), want the JSON number 0; body %s", got, ok, raw)
					}
				} else if got, ok := members["temperature"]; ok {
					t.Errorf("temperature %s sent, but the caller set none; body %s", got, raw)
				}
				if c.wantTopP0 {
					if got, ok := members["top_p"]; !ok || string(got) != "0" {
						t.Errorf("top_p sent as %s (present %v), want the JSON number 0; body %s", got, ok, raw)
					}
				}
				var decoded struct {
					Temperature *float64 `json:"temperature"`
					TopP        *float64 `json:"top_p"`
				}
				if err := json.Unmarshal(raw, &decoded); err != nil {
					t.Fatal(err)
				}
				if req.Temperature != nil && (decoded.Temperature == nil || *decoded.Temperature != 0) {
					t.Errorf("temperature decodes as %v, want exactly 0", decoded.Temperature)
				}
				if c.wantTopP0 && (decoded.TopP == nil || *decoded.TopP != 0) {
					t.Errorf("top_p decodes as %v, want exactly 0", decoded.TopP)
				}
				if bytes.Contains(raw, []byte("1e-45")) {
					t.Errorf("the zero marker reached the wire: %s", raw)
				}
			})
		}
	}
}

// A temperature other than 0 goes out as the caller wrote it, on both body
// paths; and a caller's "temperature" inside their own JSON (a tool's
// parameters) is theirs, untouched by the rewriting of the top-level 0.
func TestNonzeroTemperatureIsSentUnchanged(t *testing.T) {
	temp, zero := float32(0.7), float32(0)
	tools := json.RawMessage(`[{"type":"function","function":{"name":"f","parameters":{"type":"object","properties":{"temperature":{"type":"number","default":1e-45}}}}}]`)
	for _, withTools := range []bool{false, true} {
		for _, streamed := range []bool{false, true} {
			bodies := make(chan []byte, 1)
			p := newTestAdapter(t, zeroSamplingServer(t, bodies), func(cfg *OpenAIConfig) { cfg.StreamIdleTimeout = time.Minute })
			req := testRequest()
			req.Temperature = &temp
			if withTools {
				req.Tools, req.TopP = tools, &zero
			}
			members, raw := sentMembers(t, p, bodies, req, streamed)
			if got := string(members["temperature"]); got != "0.7" {
				t.Errorf("tools %v, streamed %v: temperature sent as %q, want 0.7; body %s", withTools, streamed, got, raw)
			}
			if withTools {
				if got := string(members["top_p"]); got != "0" {
					t.Errorf("streamed %v: top_p sent as %q, want 0; body %s", streamed, got, raw)
				}
				if !bytes.Contains(raw, []byte(`"temperature":{"type":"number","default":1e-45}`)) {
					t.Errorf("streamed %v: the tool's own schema was changed: %s", streamed, raw)
				}
			}
		}
	}
}

// A reasoning model takes only its default temperature: a caller's 0 is
// still left out for it (OpenAI refuses 0 there), on both body paths.
func TestReasoningModelStillOmitsZeroTemperature(t *testing.T) {
	zero := float32(0)
	for _, cacheKey := range []string{"", "k"} { // "k": chatBodyJSON writes the body
		for _, streamed := range []bool{false, true} {
			bodies := make(chan []byte, 1)
			p := newTestAdapter(t, zeroSamplingServer(t, bodies), func(cfg *OpenAIConfig) {
				cfg.Model, cfg.StreamIdleTimeout = "o3-mini", time.Minute
			})
			req := testRequest()
			req.Temperature, req.PromptCacheKey = &zero, cacheKey
			members, raw := sentMembers(t, p, bodies, req, streamed)
			if got, ok := members["temperature"]; ok {
				t.Errorf("cache key %q, streamed %v: temperature %s sent to a reasoning model, want it left out; body %s", cacheKey, streamed, got, raw)
			}
		}
	}
}
