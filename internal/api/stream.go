package api

import (
	"encoding/json"
	"fmt"
	"iter"
	"net/http"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/routerhq/router/internal/chat"
)

// streamChunkBytes is the most content one SSE chunk carries.
const streamChunkBytes = 64

type chunk struct {
	ID                string  `json:"id"`
	Object            string  `json:"object"`
	Created           int64   `json:"created"`
	Model             string  `json:"model"`
	SystemFingerprint *string `json:"system_fingerprint"`
	// ServiceTier is the service_tier the provider said served the answer
	// (chat.Completion.ServiceTier), on every chunk as OpenAI's stream has
	// it; a completion without one sends none.
	ServiceTier string        `json:"service_tier,omitempty"`
	Choices     []chunkChoice `json:"choices"`
	Usage       *chat.Usage   `json:"usage,omitempty"`
}

type chunkChoice struct {
	Index        int     `json:"index"`
	Delta        delta   `json:"delta"`
	FinishReason *string `json:"finish_reason"`
}

type delta struct {
	Role    string  `json:"role,omitempty"`
	Content *string `json:"content,omitempty"`
	// ReasoningContent is a piece of the model's reasoning, as DeepSeek's
	// and vLLM's streams send it, before the content.
	ReasoningContent *string `json:"reasoning_content,omitempty"`
	// ToolCalls holds one stored call, each member as stored (writeStreamBody).
	ToolCalls []map[string]json.RawMessage `json:"tool_calls,omitempty"`
}

// flush sends what w holds to the caller now. The API's middleware wraps the
// connection's ResponseWriter (statusWriter), and the wrapper is no
// http.Flusher: a type assertion would find none and every flush would be
// lost, holding the headers, the keep-alive comments and the events in the
// connection's buffer. http.ResponseController unwraps to the writer that
// can flush.
func flush(w http.ResponseWriter) {
	_ = http.NewResponseController(w).Flush()
}

// streamWrites bounds each write of a stream to stall (Config.StreamWriteStall):
// the HTTP server has no write timeout (long waits, streams), so a caller that
// stops reading without closing its connection would otherwise hold the
// handler in a write — once the connection's buffers are full — for as long as
// the connection lasts. Past the deadline the write fails, and so does every
// later one on the connection: the stream ends, as for a caller that left.
// net/http clears the deadline when the response is done (before the
// connection's next request).
type streamWrites struct {
	rc    *http.ResponseController
	stall time.Duration
}

func newStreamWrites(w http.ResponseWriter, stall time.Duration) streamWrites {
	return streamWrites{rc: http.NewResponseController(w), stall: stall}
}

// arm gives the next write and flush stall to go out. A writer that takes no
// deadline (http.ErrNotSupported: a test's recorder, a wrapper without
// Unwrap) is written to without one.
func (sw streamWrites) arm() { _ = sw.rc.SetWriteDeadline(time.Now().Add(sw.stall)) }

// writeStreamHeaders starts a streaming answer: status 200 and the SSE headers.
func writeStreamHeaders(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.Header().Set("Connection", "keep-alive")
	// nginx buffers a proxied answer by default, which would hold back the
	// keep-alive comments (SPEC §15) and the events until its buffer fills;
	// this header turns that off for the one response.
	w.Header().Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	flush(w)
}

// writeStreamBody sends a validated, complete completion as Server-Sent Events
// in OpenAI's chunk format, ending with data: [DONE]. No content is sent before
// the whole answer has won, so a client never sees a partial answer as success.
// Each event goes out within sw's stall; the first write or flush that fails
// (the caller left or stopped reading) ends the stream, and its error is
// returned.
func writeStreamBody(w http.ResponseWriter, sw streamWrites, c *chat.Completion, includeUsage bool) error {
	var err error
	send := func(v any) {
		if err != nil {
			return // the caller is gone: nothing more is marshalled or written
		}
		b, _ := json.Marshal(v)
		sw.arm()
		if _, err = fmt.Fprintf(w, "data: %s\n\n", b); err == nil {
			err = sw.rc.Flush()
		}
	}
	base := chunk{ID: c.ID, Object: "chat.completion.chunk", Created: c.Created, Model: c.Model, SystemFingerprint: c.SystemFingerprint, ServiceTier: c.ServiceTier}
	with := func(d delta, finish *string) chunk {
		ch := base
		ch.Choices = []chunkChoice{{Index: 0, Delta: d, FinishReason: finish}}
		return ch
	}
	content, reasoning, finish := "", "", "stop"
	var calls json.RawMessage
	if len(c.Choices) > 0 {
		m := c.Choices[0].Message
		content, reasoning, finish, calls = m.Text(), m.ReasoningContent, c.Choices[0].FinishReason, m.ToolCalls
	}
	// The role's delta carries content "" as OpenAI's does, except before tool
	// calls with no text: there OpenAI sends none, and the SDKs' stream
	// helpers (openai-node's finalChatCompletion) keep the message's content
	// null, as the non-streamed answer has it, instead of "".
	first := delta{Role: "assistant"}
	if content != "" || len(calls) == 0 {
		empty := ""
		first.Content = &empty
	}
	send(with(first, nil))
	// The reasoning before the answer, as the provider's stream had it.
	for piece := range streamPieces(reasoning) {
		if err != nil {
			break
		}
		send(with(delta{ReasoningContent: &piece}, nil))
	}
	for piece := range streamPieces(content) {
		if err != nil {
			break
		}
		send(with(delta{Content: &piece}, nil))
	}
	if len(calls) > 0 {
		// Each tool call whole, in a chunk of its own, with the index the
		// SDKs merge by, in the answer's order: OpenAI starts every call in
		// a new chunk, and openai-go's ChatCompletionAccumulator looks only
		// at a delta's first call, so two calls in one delta reported the
		// first alone (JustFinishedToolCall). The calls come from the stored
		// completion and encoding/json writes a map's keys sorted, so a
		// replay sends the same bytes. Each member goes out as stored
		// (json.RawMessage): a provider's own members (extra_content) come
		// back to the caller exactly, as in the unstreamed answer — decoded
		// into any, a number would become a float64 and be written again
		// changed (9007199254740993 as ...992).
		var list []map[string]json.RawMessage
		_ = json.Unmarshal(calls, &list)
		for i, call := range list {
			if err != nil {
				break
			}
			if call == nil { // never judged valid (chat.Judge); kept from a panic
				call = map[string]json.RawMessage{}
			}
			call["index"] = json.RawMessage(strconv.Itoa(i))
			send(with(delta{ToolCalls: []map[string]json.RawMessage{call}}, nil))
		}
	}
	send(with(delta{}, &finish))
	if includeUsage {
		u := base
		u.Choices = []chunkChoice{}
		u.Usage = &c.Usage
		send(u)
	}
	if err != nil {
		return err
	}
	sw.arm()
	if _, err = fmt.Fprint(w, "data: [DONE]\n\n"); err != nil {
		return err
	}
	return sw.rc.Flush()
}

// streamPieces yields s in pieces of streamChunkBytes or a little more, each
// ending at a character's end.
func streamPieces(s string) iter.Seq[string] {
	return func(yield func(string) bool) {
		for len(s) > 0 {
			n := min(streamChunkBytes, len(s))
			for n < len(s) && !utf8.RuneStart(s[n]) {
				n++
			}
			if !yield(s[:n]) {
				return
			}
			s = s[n:]
		}
	}
}
