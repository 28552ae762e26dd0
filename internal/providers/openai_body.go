package providers

import (
	"bytes"
	"encoding/json"
	"math"
	"reflect"
	"slices"
	"strconv"

	openai "github.com/sashabaranov/go-openai"

	"github.com/routerhq/router/internal/jsonenc"
)

// The request body of a chat completion, written by the adapter itself.
//
// go-openai encodes a request with encoding/json: reflection over the
// request's forty fields, and each message's MarshalJSON, whose output
// encoding/json then scans and compacts byte by byte, as it does the response
// format's schema. That was the largest single item of the router's CPU (8%
// at 64 callers, about 50 µs a call). appendChatBody writes the same bytes
// directly for the requests the adapter builds; the adapter then hands
// go-openai a stand-in that carries only the model, and the transport sends
// the body written here in place of the stand-in's (callTrace.body).
// Everything else — URL, headers, errors, the stream — stays go-openai's.
//
// go-openai's own encoding is not sent, for two things it gets wrong for the
// router. It re-encodes the caller's tools through its Tool type: a function
// tool without "parameters" (optional in OpenAI's API) goes out as
// "parameters": null, which OpenAI and Mistral refuse, and any other member
// (a custom tool's definition) is dropped. And it leaves out an empty
// content, which OpenAI requires on a system, user or tool message (a tool
// that returned nothing) and on an assistant message without tool calls. So
// the caller's tools, tool_choice and messages' tool_calls are sent as the
// caller sent them (compacted), and every message but an assistant's that
// called tools carries its content, even "". A caller's temperature or top_p
// of 0, which go-openai would leave out, is sent as 0 (zeroSampling).
//
// appendChatBody's output is chatBodyJSON's, byte for byte
// (TestChatBodyIsMarshal, and a fuzz test), which is go-openai's json.Marshal
// but for those three things: the same members in the same order, the same
// omitempty, the same escaping. A request that sets anything appendChatBody
// does not write (tools, tool calls, top_p, multi-part content, or a field a
// newer go-openai adds) is encoded by chatBodyJSON, with encoding/json: the
// check is by reflection over the request's and each message's fields not
// written here, so a field a newer go-openai adds to either is never dropped
// silently. The response format, its schema and the stream options are
// written field by field; a field added to one of them would show in the
// byte-for-byte tests (a field without omitempty at once, one with omitempty
// only where something sets it, which nothing here does). A temperature that
// is not a number (NaN, infinite) is left to go-openai, whose encoding
// refuses it, as it always did.

// appendChatBody appends creq as json.Marshal writes it and reports true, or
// appends nothing and reports false when creq sets a field it does not write.
func appendChatBody(b []byte, creq *openai.ChatCompletionRequest) ([]byte, bool) {
	if !chatBodyWritable(creq) {
		return b, false
	}
	b = slices.Grow(b, chatBodySize(creq))
	b = append(b, `{"model":`...)
	b = jsonenc.AppendString(b, creq.Model)
	b = append(b, `,"messages":`...)
	if creq.Messages == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, '[')
		for i := range creq.Messages {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendChatMessage(b, &creq.Messages[i])
		}
		b = append(b, ']')
	}
	if creq.MaxTokens != 0 {
		b = append(b, `,"max_tokens":`...)
		b = strconv.AppendInt(b, int64(creq.MaxTokens), 10)
	}
	switch creq.Temperature {
	case 0:
	case zeroSampling:
		b = append(b, `,"temperature":0`...)
	default:
		b = append(b, `,"temperature":`...)
		b = jsonenc.AppendFloat(b, float64(creq.Temperature), 32)
	}
	b = append(b, `,"stream":`...)
	b = strconv.AppendBool(b, creq.Stream)
	if rf := creq.ResponseFormat; rf != nil {
		b = append(b, `,"response_format":{`...)
		comma := false
		if rf.Type != "" {
			b = append(b, `"type":`...)
			b = jsonenc.AppendString(b, string(rf.Type))
			comma = true
		}
		if s := rf.JSONSchema; s != nil {
			if comma {
				b = append(b, ',')
			}
			b = append(b, `"json_schema":{"name":`...)
			b = jsonenc.AppendString(b, s.Name)
			if s.Description != "" {
				b = append(b, `,"description":`...)
				b = jsonenc.AppendString(b, s.Description)
			}
			b = append(b, `,"schema":`...)
			b = jsonenc.AppendRaw(b, s.Schema.(json.RawMessage))
			b = append(b, `,"strict":`...)
			b = strconv.AppendBool(b, s.Strict)
			b = append(b, '}')
		}
		b = append(b, '}')
	}
	if creq.Seed != nil {
		b = append(b, `,"seed":`...)
		b = strconv.AppendInt(b, int64(*creq.Seed), 10)
	}
	if creq.User != "" {
		b = append(b, `,"user":`...)
		b = jsonenc.AppendString(b, creq.User)
	}
	if so := creq.StreamOptions; so != nil {
		b = append(b, `,"stream_options":{`...)
		if so.IncludeUsage {
			b = append(b, `"include_usage":true`...)
		}
		b = append(b, '}')
	}
	if creq.Store {
		b = append(b, `,"store":true`...)
	}
	if len(creq.Metadata) > 0 {
		b = append(b, `,"metadata":{`...)
		keys := make([]string, 0, len(creq.Metadata))
		for k := range creq.Metadata {
			keys = append(keys, k)
		}
		slices.Sort(keys) // encoding/json writes a map's members by key
		for i, k := range keys {
			if i > 0 {
				b = append(b, ',')
			}
			b = jsonenc.AppendString(b, k)
			b = append(b, ':')
			b = jsonenc.AppendString(b, creq.Metadata[k])
		}
		b = append(b, '}')
	}
	return append(b, '}'), true
}

// appendChatMessage writes m as ChatCompletionMessage.MarshalJSON does for a
// message without multi-part content (which chatBodyWritable has checked),
// but with its content even when empty unless it is an assistant's
// (sendsContent: chatBodyWritable has checked it has no tool calls).
func appendChatMessage(b []byte, m *openai.ChatCompletionMessage) []byte {
	b = append(b, `{"role":`...)
	b = jsonenc.AppendString(b, m.Role)
	if sendsContent(m, len(m.ToolCalls) > 0) {
		b = append(b, `,"content":`...)
		b = jsonenc.AppendString(b, m.Content)
	}
	for _, f := range [...]struct{ name, v string }{
		{`,"refusal":`, m.Refusal}, {`,"name":`, m.Name},
		{`,"reasoning_content":`, m.ReasoningContent}, {`,"tool_call_id":`, m.ToolCallID},
	} {
		if f.v != "" {
			b = append(b, f.name...)
			b = jsonenc.AppendString(b, f.v)
		}
	}
	return append(b, '}')
}

// keepsContent reports whether a message of role that calls no tools is sent
// with its content even when that is "": every role's is. OpenAI requires
// content on a system, user or tool message (a tool that returned nothing is
// answered with ""), and on an assistant message without tool calls (one
// sent as {"role":"assistant"} is refused, or misread by other servers); only
// an assistant turn that called tools may go without it (sendsContent).
// go-openai leaves an empty content out (omitempty).
func keepsContent(string) bool { return true }

// sendsContent reports whether message m, whose tool calls (the caller's or
// go-openai's) are present or not as hasCalls says, is sent with its content:
// a non-empty one always, an empty one unless it is an assistant turn that
// called tools (content null, as OpenAI's own answers have it).
func sendsContent(m *openai.ChatCompletionMessage, hasCalls bool) bool {
	return m.Content != "" || (keepsContent(m.Role) && !(m.Role == "assistant" && hasCalls))
}

// chatBodySize is about the size of creq's body, so that it is written with
// one allocation.
func chatBodySize(creq *openai.ChatCompletionRequest) int {
	n := 256 + len(creq.Model) + len(creq.User)
	for i := range creq.Messages {
		m := &creq.Messages[i]
		n += 48 + len(m.Role) + len(m.Content) + len(m.Name) + len(m.ToolCallID) + len(m.Refusal) + len(m.ReasoningContent)
	}
	if rf := creq.ResponseFormat; rf != nil && rf.JSONSchema != nil {
		n += 96 + len(rf.JSONSchema.Name) + len(rf.JSONSchema.Description)
		if s, ok := rf.JSONSchema.Schema.(json.RawMessage); ok {
			n += len(s)
		}
	}
	for k, v := range creq.Metadata {
		n += 8 + len(k) + len(v)
	}
	return n
}

// chatBodyWritable reports whether appendChatBody writes everything creq
// sets: it clears, in a copy, every field appendChatBody writes and asks
// whether anything is left. A schema must be a json.RawMessage (the adapter's
// own; another json.Marshaler may write anything) that is valid JSON, which
// the adapter has checked: AppendRaw does not validate.
func chatBodyWritable(creq *openai.ChatCompletionRequest) bool {
	if t := float64(creq.Temperature); math.IsNaN(t) || math.IsInf(t, 0) {
		return false // encoding/json refuses it, and go-openai's error stays
	}
	rest := *creq
	rest.Model, rest.Messages, rest.MaxTokens, rest.Temperature, rest.Stream = "", nil, 0, 0, false
	rest.ResponseFormat, rest.Seed, rest.User, rest.StreamOptions, rest.Store, rest.Metadata = nil, nil, "", nil, false, nil
	if !reflect.ValueOf(&rest).Elem().IsZero() {
		return false
	}
	for i := range creq.Messages {
		m := creq.Messages[i]
		m.Role, m.Content, m.Refusal, m.Name, m.ReasoningContent, m.ToolCallID = "", "", "", "", "", ""
		if !reflect.ValueOf(&m).Elem().IsZero() {
			return false
		}
	}
	if rf := creq.ResponseFormat; rf != nil && rf.JSONSchema != nil {
		if s, ok := rf.JSONSchema.Schema.(json.RawMessage); !ok || !json.Valid(s) {
			return false
		}
	}
	return true
}

// chatBodyJSON is the body of creq as the adapter sends it, encoded with
// encoding/json: go-openai's encoding (json.Marshal of creq) but that the
// caller's tools, tool_choice and each message's tool_calls are req's raw
// JSON, as sent (when req has them; req may be nil), and every message but an
// assistant's that called tools keeps its content (sendsContent). Its members are in
// go-openai's order but for tools and tool_choice, which come last.
// appendChatBody writes the same bytes for the requests it writes.
func chatBodyJSON(creq *openai.ChatCompletionRequest, req *Request) ([]byte, error) {
	body := chatBody{Model: creq.Model, ChatCompletionRequest: *creq}
	if req != nil {
		body.PromptCacheKey = req.PromptCacheKey
	}
	if creq.Messages != nil {
		body.Messages = make([]chatMessage, len(creq.Messages))
	}
	for i := range creq.Messages {
		m := &creq.Messages[i]
		if m.Content != "" && m.MultiContent != nil {
			return nil, openai.ErrContentFieldsMisused // as go-openai's MarshalJSON
		}
		cm := chatMessage{Role: m.Role, Refusal: m.Refusal, Name: m.Name, ReasoningContent: m.ReasoningContent,
			FunctionCall: m.FunctionCall, ToolCallID: m.ToolCallID}
		switch {
		case req != nil && i < len(req.Messages) && len(req.Messages[i].ToolCalls) > 0:
			cm.ToolCalls = req.Messages[i].ToolCalls
		case len(m.ToolCalls) > 0:
			cm.ToolCalls = m.ToolCalls
		}
		switch {
		case len(m.MultiContent) > 0:
			cm.Content = m.MultiContent
		case sendsContent(m, cm.ToolCalls != nil):
			cm.Content = m.Content
		}
		body.Messages[i] = cm
	}
	switch {
	case req != nil && len(req.Tools) > 0:
		body.Tools = withoutNullParameters(req.Tools)
	case len(creq.Tools) > 0:
		body.Tools = creq.Tools
	}
	switch {
	case req != nil && len(req.ToolChoice) > 0:
		body.ToolChoice = req.ToolChoice
	case creq.ToolChoice != nil:
		body.ToolChoice = creq.ToolChoice
	}
	b, err := json.Marshal(body)
	if err != nil || (creq.Temperature != zeroSampling && creq.TopP != zeroSampling) {
		return b, err
	}
	return sentZeroSampling(b)
}

// zeroSampling is a caller's temperature or top_p of 0 in go-openai's
// request, whose float32 fields leave a 0 out (omitempty) and so cannot say
// "0, sent": the smallest positive float32, which the body then says as 0
// (appendChatBody, sentZeroSampling). Not 1e-45 itself: a llama.cpp server
// (and Ollama) divides the logits by a temperature above 0, which overflows
// them, where 0 is greedy decoding; OpenAI and vLLM take 0 as it is.
const zeroSampling float32 = math.SmallestNonzeroFloat32

// sentZeroSampling rewrites, in body (json.Marshal's encoding of a chatBody),
// the value of a top-level temperature or top_p that is zeroSampling to 0.
// Only the top-level members are read: a caller's "temperature" inside a
// schema, a tool or chat_template_kwargs is theirs and stays as written.
func sentZeroSampling(body []byte) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(body))
	if _, err := dec.Token(); err != nil { // {
		return nil, err
	}
	var spans [][2]int // the values to write as 0, in order
	for dec.More() {
		key, err := dec.Token()
		if err != nil {
			return nil, err
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, err
		}
		if key != "temperature" && key != "top_p" {
			continue
		}
		if f, err := strconv.ParseFloat(string(v), 32); err == nil && float32(f) == zeroSampling {
			end := int(dec.InputOffset())
			spans = append(spans, [2]int{end - len(v), end})
		}
	}
	if len(spans) == 0 {
		return body, nil
	}
	out := make([]byte, 0, len(body))
	last := 0
	for _, s := range spans {
		out = append(out, body[last:s[0]]...)
		out = append(out, '0')
		last = s[1]
	}
	return append(out, body[last:]...), nil
}

// chatBody is what chatBodyJSON encodes: go-openai's request, whose model,
// messages, tools and tool_choice are hidden by the fields of the same JSON
// names here (encoding/json takes the least nested). Model and Messages come
// first, as in go-openai's encoding.
type chatBody struct {
	Model    string        `json:"model"`
	Messages []chatMessage `json:"messages"`
	openai.ChatCompletionRequest
	// PromptCacheKey is OpenAI's prompt_cache_key, which go-openai's
	// request does not have (v1.43.0): req's.
	PromptCacheKey string `json:"prompt_cache_key,omitempty"`
	Tools          any    `json:"tools,omitempty"`
	ToolChoice     any    `json:"tool_choice,omitempty"`
}

// chatMessage is a message as chatBodyJSON encodes it: go-openai's
// ChatCompletionMessage.MarshalJSON, whose content is a string or the parts
// of a multi-part content, left out when nil, and whose tool calls may be the
// caller's raw JSON.
type chatMessage struct {
	Role             string               `json:"role"`
	Content          any                  `json:"content,omitempty"`
	Refusal          string               `json:"refusal,omitempty"`
	Name             string               `json:"name,omitempty"`
	ReasoningContent string               `json:"reasoning_content,omitempty"`
	FunctionCall     *openai.FunctionCall `json:"function_call,omitempty"`
	ToolCalls        any                  `json:"tool_calls,omitempty"`
	ToolCallID       string               `json:"tool_call_id,omitempty"`
}

// wire returns what to hand go-openai for creq, built from req: a stand-in
// that carries only the model and the stream flag (all that go-openai reads
// of a request besides encoding it), with creq's body — written by
// appendChatBody, or else by chatBodyJSON — kept in t for the transport to
// send instead of the stand-in's. go-openai's own check of reasoning models'
// parameters, which the stand-in would pass, has already run on creq
// (chatRequest refuses what it refuses). A request encoding/json cannot
// encode (a NaN temperature) is handed to go-openai whole, whose encoding
// fails the same way before anything is sent.
func wire(creq openai.ChatCompletionRequest, req *Request, t *callTrace) openai.ChatCompletionRequest {
	t.model = creq.Model
	var body []byte
	ok := false
	if req == nil || req.PromptCacheKey == "" { // go-openai has no member for it: chatBodyJSON writes it
		body, ok = appendChatBody(nil, &creq)
	}
	if !ok {
		var err error
		if body, err = chatBodyJSON(&creq, req); err != nil {
			return creq
		}
	}
	t.body = body
	return openai.ChatCompletionRequest{Model: creq.Model, Stream: creq.Stream}
}
