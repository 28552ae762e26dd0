// Package anthropicfake is an Anthropic Messages API server for tests: it speaks
// the real wire format (JSON messages, SSE events with event: lines, error
// bodies of type "error" with retry-after headers) and answers each request as
// a test function says. It owns nothing else.
package anthropicfake

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"unicode/utf8"
)

// Reply is how the fake answers one request.
type Reply struct {
	// Status and ErrorType make an error response: {"type":"error","error":{...}}.
	Status       int
	ErrorType    string
	ErrorMessage string
	ErrorCode    string            // error.details.error_code, when set
	Header       map[string]string // extra response headers (e.g. retry-after)

	// Thinking is a thinking block (the model's reasoning, with a
	// signature) before the text: streamed as two thinking_delta events
	// and a signature_delta.
	Thinking     string
	Text         string
	ToolName     string // a tool_use block after the text
	ToolInput    string // its input JSON
	StopReason   string // default end_turn, or tool_use with ToolName
	Model        string // default claude-test-1
	InputTokens  int
	OutputTokens int

	// Stream faults (streamed requests only). The text (and a tool's input)
	// is streamed in two deltas split near its middle, on a character
	// boundary as Anthropic does: the first delta is the part before it.
	// CutAfterText and BlockAfter need a Text: without one there is no first
	// text delta, and the fake fails the test rather than send a whole
	// message.
	CutAfterText bool   // end the stream after the first text delta, without message_stop
	StreamError  string // send an error event of this type after message_start
	Malformed    bool   // send an undecodable event after message_start
	BlockAfter   bool   // after the first text delta, block until the client goes away
	// IgnoreStream answers a streamed request with the whole message JSON
	// (Content-Type application/json), as a proxy that drops stream does.
	IgnoreStream bool
}

// Request is what the fake received.
type Request struct {
	Header http.Header
	Body   map[string]any
}

// Server is a running fake.
type Server struct {
	*httptest.Server
	mu       sync.Mutex
	requests []Request
}

// New starts a fake closed at the test's cleanup; reply decides each answer.
func New(t testing.TB, reply func(r Request) Reply) *Server {
	t.Helper()
	s := &Server{}
	release := make(chan struct{})
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/messages" || r.Method != http.MethodPost {
			writeError(w, 404, "not_found_error", "no route "+r.Method+" "+r.URL.Path, "", nil)
			return
		}
		raw, _ := io.ReadAll(r.Body)
		var body map[string]any
		if err := json.Unmarshal(raw, &body); err != nil {
			writeError(w, 400, "invalid_request_error", "body is not JSON", "", nil)
			return
		}
		req := Request{Header: r.Header.Clone(), Body: body}
		s.mu.Lock()
		s.requests = append(s.requests, req)
		s.mu.Unlock()
		if msg := refused(body); msg != "" {
			writeError(w, 400, "invalid_request_error", msg, "", nil)
			return
		}
		rep := reply(req)
		if rep.Status >= 400 {
			writeError(w, rep.Status, rep.ErrorType, rep.ErrorMessage, rep.ErrorCode, rep.Header)
			return
		}
		if stream, _ := body["stream"].(bool); stream && !rep.IgnoreStream {
			if (rep.CutAfterText || rep.BlockAfter) && rep.Text == "" {
				// Errorf, not Fatal: this is the server's goroutine.
				t.Errorf("anthropicfake: CutAfterText and BlockAfter need a Text (they act after its first delta); the stream is cut after message_start")
				writeStream(w, r, Reply{InputTokens: rep.InputTokens, Malformed: true}, release)
				return
			}
			writeStream(w, r, rep, release)
			return
		}
		writeMessage(w, rep)
	}))
	t.Cleanup(s.Server.Close)
	t.Cleanup(func() { close(release) }) // runs first: blocked handlers return
	return s
}

// Requests returns what the fake received so far.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

// refused says why the real API would refuse the request body with a 400
// invalid_request_error, "" when it would not: a custom tool (no type, or
// type custom) without input_schema, or tool_use or tool_result blocks in a
// request that defines no tools.
func refused(body map[string]any) string {
	tools, _ := body["tools"].([]any)
	if len(tools) == 0 && toolBlocks(body) {
		return "Requests which include `tool_use` or `tool_result` blocks must define tools."
	}
	for i, t := range tools {
		tool, _ := t.(map[string]any)
		if typ, _ := tool["type"].(string); typ != "" && typ != "custom" {
			continue // a server tool has no input schema
		}
		if _, ok := tool["input_schema"].(map[string]any); !ok {
			return fmt.Sprintf("tools.%d.custom.input_schema: Field required", i)
		}
	}
	return ""
}

// toolBlocks reports a tool_use or tool_result block in the body's messages.
func toolBlocks(body map[string]any) bool {
	msgs, _ := body["messages"].([]any)
	for _, m := range msgs {
		msg, _ := m.(map[string]any)
		content, _ := msg["content"].([]any)
		for _, c := range content {
			block, _ := c.(map[string]any)
			if typ, _ := block["type"].(string); typ == "tool_use" || typ == "tool_result" {
				return true
			}
		}
	}
	return false
}

func writeError(w http.ResponseWriter, status int, typ, msg, code string, hdr map[string]string) {
	for k, v := range hdr {
		w.Header().Set(k, v)
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("request-id", "req_fake")
	w.WriteHeader(status)
	e := map[string]any{"type": typ, "message": msg}
	if code != "" {
		e["details"] = map[string]any{"error_code": code}
	}
	json.NewEncoder(w).Encode(map[string]any{"type": "error", "error": e, "request_id": "req_fake"})
}

func (r Reply) model() string {
	if r.Model != "" {
		return r.Model
	}
	return "claude-test-1"
}

func (r Reply) stopReason() string {
	switch {
	case r.StopReason != "":
		return r.StopReason
	case r.ToolName != "":
		return "tool_use"
	}
	return "end_turn"
}

func (r Reply) toolInput() json.RawMessage {
	if r.ToolInput == "" {
		return json.RawMessage(`{}`)
	}
	return json.RawMessage(r.ToolInput)
}

func usage(in, out int) map[string]any {
	return map[string]any{"input_tokens": in, "output_tokens": out,
		"cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}
}

func writeMessage(w http.ResponseWriter, r Reply) {
	content := []any{}
	if r.Thinking != "" {
		content = append(content, map[string]any{"type": "thinking", "thinking": r.Thinking, "signature": "sig_fake"})
	}
	if r.Text != "" {
		content = append(content, map[string]any{"type": "text", "text": r.Text})
	}
	if r.ToolName != "" {
		content = append(content, map[string]any{"type": "tool_use", "id": "toolu_fake1", "name": r.ToolName, "input": r.toolInput()})
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]any{
		"id": "msg_fake1", "type": "message", "role": "assistant", "model": r.model(),
		"content": content, "stop_reason": r.stopReason(), "stop_sequence": nil,
		"usage": usage(r.InputTokens, r.OutputTokens),
	})
}

func event(w http.ResponseWriter, typ string, data any) {
	b, _ := json.Marshal(data)
	fmt.Fprintf(w, "event: %s\ndata: %s\n\n", typ, b)
	w.(http.Flusher).Flush()
}

func writeStream(w http.ResponseWriter, req *http.Request, r Reply, release <-chan struct{}) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	event(w, "message_start", map[string]any{"type": "message_start", "message": map[string]any{
		"id": "msg_fake1", "type": "message", "role": "assistant", "model": r.model(), "content": []any{},
		"stop_reason": nil, "stop_sequence": nil, "usage": usage(r.InputTokens, 1),
	}})
	if r.StreamError != "" {
		event(w, "error", map[string]any{"type": "error", "error": map[string]any{"type": r.StreamError, "message": "stream error " + r.StreamError}})
		return
	}
	if r.Malformed {
		fmt.Fprint(w, "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_del\n\n")
		w.(http.Flusher).Flush()
		return
	}
	event(w, "ping", map[string]any{"type": "ping"})
	idx := 0
	if r.Thinking != "" {
		event(w, "content_block_start", map[string]any{"type": "content_block_start", "index": idx, "content_block": map[string]any{"type": "thinking", "thinking": "", "signature": ""}})
		first, rest := halves(r.Thinking)
		for _, part := range []string{first, rest} {
			if part != "" {
				event(w, "content_block_delta", map[string]any{"type": "content_block_delta", "index": idx, "delta": map[string]any{"type": "thinking_delta", "thinking": part}})
			}
		}
		event(w, "content_block_delta", map[string]any{"type": "content_block_delta", "index": idx, "delta": map[string]any{"type": "signature_delta", "signature": "sig_fake"}})
		event(w, "content_block_stop", map[string]any{"type": "content_block_stop", "index": idx})
		idx++
	}
	if r.Text != "" {
		event(w, "content_block_start", map[string]any{"type": "content_block_start", "index": idx, "content_block": map[string]any{"type": "text", "text": ""}})
		first, rest := halves(r.Text)
		event(w, "content_block_delta", map[string]any{"type": "content_block_delta", "index": idx, "delta": map[string]any{"type": "text_delta", "text": first}})
		if r.CutAfterText {
			return
		}
		if r.BlockAfter {
			select {
			case <-release:
			case <-req.Context().Done():
			}
			return
		}
		if rest != "" {
			event(w, "content_block_delta", map[string]any{"type": "content_block_delta", "index": idx, "delta": map[string]any{"type": "text_delta", "text": rest}})
		}
		event(w, "content_block_stop", map[string]any{"type": "content_block_stop", "index": idx})
		idx++
	}
	if r.ToolName != "" {
		event(w, "content_block_start", map[string]any{"type": "content_block_start", "index": idx, "content_block": map[string]any{"type": "tool_use", "id": "toolu_fake1", "name": r.ToolName, "input": map[string]any{}}})
		first, rest := halves(string(r.toolInput()))
		for _, part := range []string{first, rest} {
			if part == "" {
				continue
			}
			event(w, "content_block_delta", map[string]any{"type": "content_block_delta", "index": idx, "delta": map[string]any{"type": "input_json_delta", "partial_json": part}})
		}
		event(w, "content_block_stop", map[string]any{"type": "content_block_stop", "index": idx})
	}
	event(w, "message_delta", map[string]any{"type": "message_delta",
		"delta": map[string]any{"stop_reason": r.stopReason(), "stop_sequence": nil},
		"usage": map[string]any{"output_tokens": r.OutputTokens}})
	event(w, "message_stop", map[string]any{"type": "message_stop"})
}

// halves splits s in two at the first character boundary at or after its
// middle byte: a multi-byte character is never cut in two (json.Marshal
// would write each half as U+FFFD). The first half is empty only when s is.
func halves(s string) (string, string) {
	i := len(s) / 2
	for i < len(s) && !utf8.RuneStart(s[i]) {
		i++
	}
	if i == 0 && s != "" {
		_, i = utf8.DecodeRuneInString(s)
	}
	return s[:i], s[i:]
}
