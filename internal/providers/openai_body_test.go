package providers

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"sync"
	"testing"

	openai "github.com/sashabaranov/go-openai"
)

const bodySchema = "{\n  \"type\": \"object\",\n  \"properties\": {\"a\": {\"type\": \"string\", \"pattern\": \"^<&>$\"}}\n}"

// checkChatBody fails unless appendChatBody writes creq exactly as
// chatBodyJSON (encoding/json) does, and, when no message but an assistant's
// has an empty content, exactly as json.Marshal (go-openai's encoding) does.
func checkChatBody(t *testing.T, name string, creq openai.ChatCompletionRequest) {
	t.Helper()
	want, err := chatBodyJSON(&creq, nil)
	if err != nil {
		t.Fatalf("%s: chatBodyJSON: %v", name, err)
	}
	got, ok := appendChatBody([]byte("prefix"), &creq)
	if !ok {
		t.Fatalf("%s: appendChatBody declined a request it should write", name)
	}
	if !bytes.Equal(got[len("prefix"):], want) || string(got[:len("prefix")]) != "prefix" {
		t.Errorf("%s:\nappendChatBody %s\nchatBodyJSON   %s", name, got, want)
	}
	for _, m := range creq.Messages {
		if m.Content == "" && keepsContent(m.Role) {
			return // go-openai would leave the content out
		}
	}
	goOpenAI, err := json.Marshal(creq)
	if creq.Temperature == zeroSampling {
		// go-openai writes the marker itself, which the adapter sends as 0
		goOpenAI = bytes.Replace(goOpenAI, []byte(`"temperature":1e-45`), []byte(`"temperature":0`), 1)
	}
	if err != nil || !bytes.Equal(want, goOpenAI) {
		t.Errorf("%s:\nchatBodyJSON %s\njson.Marshal %s (%v)", name, want, goOpenAI, err)
	}
}

func TestChatBodyIsMarshal(t *testing.T) {
	seed, zero := 42, 0
	full := openai.ChatCompletionRequest{
		Model: "gpt-<4>", MaxTokens: 300, Temperature: math.SmallestNonzeroFloat32, Stream: true, Seed: &seed, User: "u \"7\"",
		Messages: []openai.ChatCompletionMessage{
			{Role: "system", Content: "Answer with JSON.\n\t\"quoted\" <b>&</b> \u2028 \xff"},
			{Role: "user", Content: "hi", Name: "ann"},
			{Role: "assistant", Refusal: "no", ReasoningContent: "because"},
			{Role: "tool", Content: "42", ToolCallID: "call_1"},
			{Role: "user"},
		},
		ResponseFormat: &openai.ChatCompletionResponseFormat{Type: openai.ChatCompletionResponseFormatTypeJSONSchema,
			JSONSchema: &openai.ChatCompletionResponseFormatJSONSchema{Name: "response", Description: "d", Schema: json.RawMessage(bodySchema), Strict: true}},
		StreamOptions: &openai.StreamOptions{IncludeUsage: true},
		Store:         true,
		Metadata:      map[string]string{"router_job_id": "j", "router_attempt_id": "a", "z": "<>"},
	}
	checkChatBody(t, "every field written", full)
	checkChatBody(t, "zero", openai.ChatCompletionRequest{})
	checkChatBody(t, "model and messages", openai.ChatCompletionRequest{Model: "m", Messages: []openai.ChatCompletionMessage{{Role: "user", Content: "x"}}})
	for _, temp := range []float32{0.2, 1, 1.5, 2, 1e-7} {
		checkChatBody(t, fmt.Sprint("temperature ", temp), openai.ChatCompletionRequest{Model: "m", Temperature: temp})
	}
	checkChatBody(t, "seed 0, empty metadata, stream options without usage", openai.ChatCompletionRequest{
		Model: "m", Seed: &zero, Metadata: map[string]string{}, StreamOptions: &openai.StreamOptions{}})
	checkChatBody(t, "json_object", openai.ChatCompletionRequest{Model: "m",
		ResponseFormat: &openai.ChatCompletionResponseFormat{Type: openai.ChatCompletionResponseFormatTypeJSONObject}})
	checkChatBody(t, "schema without type", openai.ChatCompletionRequest{Model: "m",
		ResponseFormat: &openai.ChatCompletionResponseFormat{JSONSchema: &openai.ChatCompletionResponseFormatJSONSchema{Schema: json.RawMessage(`{}`)}}})
	checkChatBody(t, "empty response format", openai.ChatCompletionRequest{Model: "m", ResponseFormat: &openai.ChatCompletionResponseFormat{}})
	checkChatBody(t, "no messages, empty slice", openai.ChatCompletionRequest{Model: "m", Messages: []openai.ChatCompletionMessage{}})
}

// TestChatBodyOfTheAdaptersRequests checks the requests chatRequest builds,
// with and without lookup metadata, as the adapter sends them.
func TestChatBodyOfTheAdaptersRequests(t *testing.T) {
	for _, lookup := range []bool{false, true} {
		p := newTestAdapter(t, "http://127.0.0.1:1/v1", func(c *OpenAIConfig) { c.SupportsLookup = lookup })
		temp, seed := float32(0), 7
		req := testRequest()
		req.Temperature, req.Seed, req.MaxTokens, req.User = &temp, &seed, 300, "u"
		req.ResponseFormat = &ResponseFormat{Type: "json_schema", Schema: []byte(bodySchema), Strict: true}
		creq, perr := p.chatRequest(req)
		if perr != nil {
			t.Fatal(perr)
		}
		checkChatBody(t, fmt.Sprint("lookup ", lookup), creq)
		creq.Stream, creq.StreamOptions = true, &openai.StreamOptions{IncludeUsage: true}
		checkChatBody(t, fmt.Sprint("streamed, lookup ", lookup), creq)
	}
}

func FuzzChatBody(f *testing.F) {
	f.Add("gpt-4o", "be brief", "hi <&>", "ann", "call_1", float32(0.7), 300, 42, true, bodySchema, "router_job_id", "j-1")
	f.Add("", "", "", "", "", float32(0), 0, 0, false, "", "", "")
	f.Add("m\xff", "\u2028\x00", "\"\\", "n", "", float32(1e-40), -1, -5, true, `[1, 2]`, "k\xfe", "\x7f")
	f.Fuzz(func(t *testing.T, model, system, user, name, toolCallID string, temp float32, maxTokens, seed int,
		strict bool, schema, metaKey, metaValue string) {
		creq := openai.ChatCompletionRequest{Model: model, Temperature: temp, MaxTokens: maxTokens, Seed: &seed, User: name, Stream: strict,
			Messages: []openai.ChatCompletionMessage{{Role: "system", Content: system}, {Role: "user", Content: user, Name: name, ToolCallID: toolCallID}},
			Metadata: map[string]string{metaKey: metaValue, metaValue: metaKey}}
		if json.Valid([]byte(schema)) {
			creq.ResponseFormat = &openai.ChatCompletionResponseFormat{Type: openai.ChatCompletionResponseFormatTypeJSONSchema,
				JSONSchema: &openai.ChatCompletionResponseFormatJSONSchema{Name: name, Schema: json.RawMessage(schema), Strict: strict}}
		}
		if math.IsNaN(float64(temp)) || math.IsInf(float64(temp), 0) {
			// encoding/json refuses it: go-openai must encode it (and fail)
			if _, ok := appendChatBody(nil, &creq); ok {
				t.Fatalf("temperature %v written, want the request declined", temp)
			}
			return
		}
		checkChatBody(t, "fuzzed", creq)
	})
}

// TestChatBodyLeavesTheRestToEncodingJSON: a request that sets anything
// appendChatBody does not write is declined, with nothing appended, so that
// chatBodyJSON (or, for a NaN temperature, go-openai) encodes it.
func TestChatBodyLeavesTheRestToEncodingJSON(t *testing.T) {
	msgs := func(m openai.ChatCompletionMessage) []openai.ChatCompletionMessage {
		return []openai.ChatCompletionMessage{{Role: "system", Content: "s"}, m}
	}
	schema := func(s json.Marshaler) *openai.ChatCompletionResponseFormat {
		return &openai.ChatCompletionResponseFormat{Type: "json_schema", JSONSchema: &openai.ChatCompletionResponseFormatJSONSchema{Name: "r", Schema: s}}
	}
	cases := map[string]openai.ChatCompletionRequest{
		"tools":             {Model: "m", Tools: []openai.Tool{{Type: openai.ToolTypeFunction, Function: &openai.FunctionDefinition{Name: "f"}}}},
		"tool choice":       {Model: "m", ToolChoice: "auto"},
		"top_p":             {Model: "m", TopP: 0.5},
		"stop":              {Model: "m", Stop: []string{"x"}},
		"reasoning effort":  {Model: "m", ReasoningEffort: "low"},
		"an extension":      {Model: "m", ChatTemplateKwargs: map[string]any{"a": 1}},
		"an embedded field": {Model: "m", ChatCompletionRequestExtensions: openai.ChatCompletionRequestExtensions{GuidedChoice: []string{"a"}}},
		"tool calls": {Model: "m", Messages: msgs(openai.ChatCompletionMessage{Role: "assistant",
			ToolCalls: []openai.ToolCall{{ID: "c", Type: openai.ToolTypeFunction, Function: openai.FunctionCall{Name: "f"}}}})},
		"multi-part content": {Model: "m", Messages: msgs(openai.ChatCompletionMessage{Role: "user",
			MultiContent: []openai.ChatMessagePart{{Type: openai.ChatMessagePartTypeText, Text: "x"}}})},
		"a function call":           {Model: "m", Messages: msgs(openai.ChatCompletionMessage{Role: "assistant", FunctionCall: &openai.FunctionCall{Name: "f"}})},
		"a schema of another type":  {Model: "m", ResponseFormat: schema(otherSchema{})},
		"no schema":                 {Model: "m", ResponseFormat: schema(nil)},
		"a schema that is not JSON": {Model: "m", ResponseFormat: schema(json.RawMessage(`{"a":`))},
		"a NaN temperature":         {Model: "m", Temperature: float32(math.NaN())},
		"an infinite temperature":   {Model: "m", Temperature: float32(math.Inf(-1))},
	}
	for name, creq := range cases {
		if got, ok := appendChatBody([]byte("x"), &creq); ok || string(got) != "x" {
			t.Errorf("%s: appendChatBody = %q, %v; want it declined with nothing appended", name, got, ok)
		}
	}
}

// otherSchema is a json.Marshaler that is not a json.RawMessage.
type otherSchema struct{}

func (otherSchema) MarshalJSON() ([]byte, error) { return []byte(`{"type":"object"}`), nil }

// rawCapture records the raw bodies of the requests a fake server saw.
type rawCapture struct {
	mu     sync.Mutex
	bodies [][]byte
}

func (c *rawCapture) server(t *testing.T, answer func(w http.ResponseWriter, stream bool)) string {
	srv := newFakeServer(t, func(w http.ResponseWriter, r *http.Request) {
		b, err := io.ReadAll(r.Body)
		if err != nil {
			t.Errorf("read body: %v", err)
		}
		if r.ContentLength != int64(len(b)) {
			t.Errorf("Content-Length %d for a body of %d bytes", r.ContentLength, len(b))
		}
		c.mu.Lock()
		c.bodies = append(c.bodies, b)
		c.mu.Unlock()
		var head struct{ Stream bool }
		json.Unmarshal(b, &head)
		answer(w, head.Stream)
	})
	return srv.URL + "/v1"
}

func (c *rawCapture) last(t *testing.T) []byte {
	t.Helper()
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.bodies) == 0 {
		t.Fatal("the server saw no request")
	}
	return c.bodies[len(c.bodies)-1]
}

// TestAdapterSendsTheBodyGoOpenAIWould: over real HTTP through go-openai,
// the body the provider receives is, byte for byte, json.Marshal of the whole
// request — what go-openai sends — both when appendChatBody writes it (the
// stand-in go-openai encodes would be a different body) and when
// chatBodyJSON does (top_p, stop). (Tools and empty contents are where the
// router's body differs from go-openai's: TestOpenAISendsToolsAsSent,
// TestOpenAIKeepsEmptyContent.)
func TestAdapterSendsTheBodyGoOpenAIWould(t *testing.T) {
	c, url := answeringCapture(t)
	p := newTestAdapter(t, url, func(c *OpenAIConfig) { c.SupportsLookup = true })
	temp, topP := float32(0.3), float32(0.5)
	plain := testRequest()
	plain.Temperature, plain.MaxTokens = &temp, 100
	plain.ResponseFormat = &ResponseFormat{Type: "json_schema", Schema: []byte(bodySchema)}
	rest := testRequest()
	rest.TopP, rest.Stop = &topP, []string{"END"}

	for name, req := range map[string]*Request{"written by appendChatBody": plain, "encoded by chatBodyJSON": rest} {
		for _, stream := range []bool{false, true} {
			got, wantBody := sentBody(t, p, c, req, stream)
			if !bytes.Equal(got, wantBody) {
				t.Errorf("%s, stream %v: the provider received\n%s\nwant (go-openai's encoding)\n%s", name, stream, got, wantBody)
			}
		}
	}
	var tr callTrace
	if sent := wire(must(p.chatRequest(plain)), plain, &tr); tr.body == nil || len(sent.Messages) != 0 {
		t.Error("the plain request was not written by the adapter: go-openai encoded it whole")
	}
	tr = callTrace{}
	if sent := wire(must(p.chatRequest(rest)), rest, &tr); tr.body == nil || len(sent.Messages) != 0 {
		t.Error("the request with top_p was not encoded by the adapter: go-openai encoded it whole")
	}
}

func must(creq openai.ChatCompletionRequest, perr *Error) openai.ChatCompletionRequest {
	if perr != nil {
		panic(perr)
	}
	return creq
}

// TestReasoningModelsRefusalStaysGoOpenAIs: go-openai's check refuses a
// temperature other than the default for a reasoning model; the stand-in
// (only the model) would pass that check, so the adapter runs it on the
// whole request, and nothing is sent. (Its max_tokens is sent as
// max_completion_tokens: TestReasoningModelsGetMaxCompletionTokens; the
// refusal is the caller's: TestReasoningModelCallerTemperatureIsNotATargetFailure.)
func TestReasoningModelsRefusalStaysGoOpenAIs(t *testing.T) {
	var c rawCapture
	url := c.server(t, func(w http.ResponseWriter, _ bool) { t.Error("a refused request reached the provider") })
	p := newTestAdapter(t, url, func(c *OpenAIConfig) { c.Model = "o1-mini" })
	req := testRequest()
	req.MaxTokens = 100
	temp := float32(0.5)
	req.Temperature = &temp
	_, err := p.CompleteStream(context.Background(), req, nil)
	if !errors.Is(err, openai.ErrReasoningModelLimitationsOther) {
		t.Fatalf("CompleteStream = %v, want go-openai's %v", err, openai.ErrReasoningModelLimitationsOther)
	}
}

func BenchmarkChatBody(b *testing.B) {
	temp, seed := float32(0), 7
	creq := openai.ChatCompletionRequest{Model: "gpt-4o", Temperature: temp, Seed: &seed, MaxTokens: 300, Stream: true, Store: true,
		StreamOptions: &openai.StreamOptions{IncludeUsage: true},
		Messages: []openai.ChatCompletionMessage{{Role: "system", Content: string(bytes.Repeat([]byte("Answer with one JSON object. "), 20))},
			{Role: "user", Content: "Subject: cannot log in\n\nThe reset link expired."}},
		ResponseFormat: &openai.ChatCompletionResponseFormat{Type: openai.ChatCompletionResponseFormatTypeJSONSchema,
			JSONSchema: &openai.ChatCompletionResponseFormatJSONSchema{Name: "response", Schema: json.RawMessage(bodySchema), Strict: true}},
		Metadata: map[string]string{"router_job_id": "j", "router_attempt_id": "a"}}
	b.Run("encoding/json", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			json.Marshal(creq)
		}
	})
	b.Run("appendChatBody", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			appendChatBody(nil, &creq)
		}
	})
}

// closeTracker is a request body that records whether it was closed.
type closeTracker struct {
	io.Reader
	closed bool
}

func (c *closeTracker) Close() error { c.closed = true; return nil }

// roundTripFunc is an http.RoundTripper made of a function.
type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// TestTransportSendsTheAdaptersBody: the transport gives the next
// RoundTripper the adapter's body — as Body, as GetBody (which net/http calls
// to send a request again on a new connection, and for a 307/308 redirect)
// and in ContentLength — closes the stand-in's body, and leaves the caller's
// request as it was.
func TestTransportSendsTheAdaptersBody(t *testing.T) {
	body := []byte(`{"model":"m","messages":[{"role":"user","content":"hi"}],"stream":true}`)
	var got *http.Request
	hc := tracingClient(&http.Client{Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
		got = r
		return &http.Response{StatusCode: http.StatusOK, Body: http.NoBody, Header: http.Header{}, Request: r}, nil
	})})
	ctx, trace := withCallTrace(context.Background(), nil)
	trace.body = body
	standIn := &closeTracker{Reader: bytes.NewReader([]byte(`{"model":"m","stream":true}`))}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://provider.invalid/v1/chat/completions", standIn)
	if err != nil {
		t.Fatal(err)
	}
	req.ContentLength = 27
	if _, err := hc.Transport.RoundTrip(req); err != nil {
		t.Fatal(err)
	}
	if got == nil || got == req {
		t.Fatal("the next RoundTripper got the caller's request itself, or none")
	}
	read := func(name string, rc io.ReadCloser, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		b, _ := io.ReadAll(rc)
		if !bytes.Equal(b, body) {
			t.Errorf("%s = %s, want the adapter's body %s", name, b, body)
		}
	}
	read("Body", got.Body, nil)
	if got.GetBody == nil {
		t.Fatal("no GetBody: a request sent again would go without the adapter's body")
	}
	for range 2 {
		rc, err := got.GetBody()
		read("GetBody()", rc, err)
	}
	if got.ContentLength != int64(len(body)) {
		t.Errorf("ContentLength %d, want %d", got.ContentLength, len(body))
	}
	if !standIn.closed {
		t.Error("the stand-in's body was not closed")
	}
	if req.Body != standIn || req.ContentLength != 27 {
		t.Error("the caller's request was modified")
	}
}
