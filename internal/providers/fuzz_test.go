package providers

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"testing"
)

// bodyTransport answers every request with status and body, without a network.
type bodyTransport struct {
	status      int
	contentType string
	body        []byte
}

func (b bodyTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	return &http.Response{StatusCode: b.status, Status: http.StatusText(b.status), Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: http.Header{"Content-Type": {b.contentType}}, Body: io.NopCloser(bytes.NewReader(b.body)), Request: req}, nil
}

// FuzzOpenAIStream: whatever bytes a provider streams (or answers with), the
// OpenAI adapter returns either a Response or an *Error of a known kind, never
// both, never neither, and never panics — bad tool-call indexes and oversized
// streams included.
func FuzzOpenAIStream(f *testing.F) {
	toolChunk := `{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"tool_calls":[{"index":-1,"id":"x","type":"function","function":{"name":"f","arguments":"{}"}}]}}]}`
	// chunks which decodeChunk decodes with goccy (tool-call deltas) and with
	// encoding/json (the usage chunk's "choices":[])
	toolHead := `{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":null,"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"f","arguments":""}}]},"logprobs":null,"finish_reason":null}]}`
	toolArgs := `{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"a\":\"\u00e9\u2028\"}"}}]},"logprobs":null,"finish_reason":null}]}`
	usageChunk := `{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[],"usage":{"prompt_tokens":3,"completion_tokens":2,"total_tokens":5}}`
	for _, seed := range []string{
		"data: " + toolHead + "\n\ndata: " + toolArgs + "\n\ndata: " + chunk("", "tool_calls") + "\n\ndata: " + usageChunk + "\n\ndata: [DONE]\n\n",
		"data: " + chunk(`{"a":`, "") + "\n\ndata: " + chunk(`1}`, "stop") + "\n\ndata: " + usageChunk + "\n\ndata: [DONE]\n\n",
		"data: " + chunk(`{"a":`, "") + "\n\ndata: " + chunk(`1}`, "stop") + "\n\ndata: [DONE]\n\n",
		"data: " + toolChunk + "\n\ndata: " + chunk("", "tool_calls") + "\n\ndata: [DONE]\n\n",
		"data: " + chunk("x", "") + "\n\n",
		"data: {\"error\":{\"message\":\"overloaded\",\"type\":\"server_error\"}}\n\n",
		"data: {not json}\n\n", ": keep-alive\n\nevent: ping\n\n", "data: [DONE]\n\n", "",
		"data: " + chunk("x", "") + "\n\n: waiting\n\nevent: error\nid: 1\ndata: {\"error\":{\"message\":\"slow down\",\"code\":429}}\n\n",
		"data: {\"error\":\"Input validation error\",\"error_type\":\"validation\"}\n\n",
		completionBody,
	} {
		f.Add([]byte(seed), true, uint16(200))
		f.Add([]byte(seed), false, uint16(200))
	}
	f.Add([]byte(`{"error":{"message":"slow down","type":"rate_limit_error"}}`), false, uint16(429))
	f.Fuzz(func(t *testing.T, body []byte, stream bool, status uint16) {
		st := int(status)
		if st < 200 || st > 599 {
			st = 200
		}
		ct := "application/json"
		if stream {
			ct = "text/event-stream"
		}
		p, err := NewOpenAI(OpenAIConfig{Name: "fuzz", BaseURL: "http://fuzz.invalid/v1", Model: "m", MaxResponseBytes: 4096,
			HTTPClient: &http.Client{Transport: bodyTransport{status: st, contentType: ct, body: body}}})
		if err != nil {
			t.Fatal(err)
		}
		var resp *Response
		if stream {
			resp, err = p.CompleteStream(context.Background(), toolRequest(), nil)
		} else {
			resp, err = p.Complete(context.Background(), toolRequest())
		}
		if (resp == nil) == (err == nil) {
			t.Fatalf("response %v with error %v: want exactly one", resp, err)
		}
		if err != nil {
			e, ok := AsError(err)
			if !ok || !KnownKind(e.Kind) || e.Fault == "" || e.Action == "" {
				t.Fatalf("error %T %v is not a classified *Error", err, err)
			}
		}
	})
}
