package api_test

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	openai "github.com/sashabaranov/go-openai"

	"github.com/routerhq/router/internal/providers"
)

const chatPath = "/v1/chat/completions"

// openAIErr is the error object of a chat reply.
func openAIErr(r reply) (typ, code, param, msg string) {
	e, _ := r.body["error"].(map[string]any)
	typ, _ = e["type"].(string)
	code, _ = e["code"].(string)
	param, _ = e["param"].(string)
	msg, _ = e["message"].(string)
	return
}

// A parameter every provider refuses is refused before anything is written:
// no job, key or attempt, the provider never called, and the corrected request
// with the same Idempotency-Key runs normally (SPEC §4.4).
func TestChatRefusesOutOfRangeParametersBeforeWriting(t *testing.T) {
	b := setup(t, options{respond: func(int, *providers.Request) providers.Step { return providers.Step{Output: "hello"} }})
	for _, c := range []struct{ fields, param string }{
		{`"temperature":5`, "temperature"},
		{`"max_tokens":-1`, "max_tokens"},
		{`"max_completion_tokens":0`, "max_completion_tokens"},
		{`"tool_choice":"required"`, "tool_choice"},
	} {
		r := b.do(t, http.MethodPost, chatPath, acmeKey,
			`{"model":"default",`+c.fields+`,"messages":[{"role":"user","content":"hi"}]}`, "Idempotency-Key", "params-1")
		typ, code, param, msg := openAIErr(r)
		if r.status != http.StatusBadRequest || typ != "invalid_request_error" || code != "invalid_request" || param != c.param || msg == "" {
			t.Fatalf("%s: status %d body %s, want 400 invalid_request_error naming %s", c.fields, r.status, r.raw, c.param)
		}
		for _, table := range []string{"jobs", "idempotency_keys", "attempts"} {
			if n := b.count(t, `SELECT count(*) FROM `+table); n != 0 {
				t.Fatalf("%s: %d rows left in %s by a refused request", c.fields, n, table)
			}
		}
	}
	if n := len(b.primary.Requests()); n != 0 {
		t.Fatalf("the provider was called %d times for refused requests", n)
	}
	r := b.do(t, http.MethodPost, chatPath, acmeKey,
		`{"model":"default","temperature":1,"messages":[{"role":"user","content":"hi"}]}`, "Idempotency-Key", "params-1")
	if r.status != http.StatusOK {
		t.Fatalf("the corrected request with the same key: status %d body %s", r.status, r.raw)
	}
}

// One JSON object and then only whitespace: anything else after it is a 400,
// including a stray `}` or `]` (which json.Decoder.More does not report).
func TestChatRefusesDataAfterTheBody(t *testing.T) {
	b := setup(t, options{respond: func(int, *providers.Request) providers.Step { return providers.Step{Output: "hello"} }})
	const body = `{"model":"default","messages":[{"role":"user","content":"hi"}]}`
	for _, tail := range []string{" trailing garbage", "}", "]", " {}", ",", "\n\"x\""} {
		r := b.do(t, http.MethodPost, chatPath, acmeKey, body+tail)
		typ, code, _, msg := openAIErr(r)
		if r.status != http.StatusBadRequest || typ != "invalid_request_error" || code != "invalid_json" ||
			!strings.Contains(msg, "after the JSON object") || !strings.Contains(msg, "exactly one JSON object") {
			t.Errorf("tail %q: status %d body %s", tail, r.status, r.raw)
		}
	}
	if n := b.count(t, `SELECT count(*) FROM jobs`); n != 0 {
		t.Fatalf("%d jobs created by refused bodies", n)
	}
	if r := b.do(t, http.MethodPost, chatPath, acmeKey, body+" \n\t\r\n"); r.status != http.StatusOK {
		t.Fatalf("trailing whitespace: status %d body %s", r.status, r.raw)
	}
}

// A caller's own key that happens to start with "auto-" (the prefix of the
// keys the router makes up) is still the caller's: the 504 tells it to resend
// with that key, not that it sent none.
func TestChatOwnKeyStartingWithAutoIsTheCallers(t *testing.T) {
	b := setup(t, options{timeout: 50 * time.Millisecond, respond: func(int, *providers.Request) providers.Step {
		return providers.Step{Hang: true}
	}})
	r := b.do(t, http.MethodPost, chatPath, acmeKey, `{"model":"default","messages":[{"role":"user","content":"hi"}]}`,
		"Idempotency-Key", "auto-mine-1")
	_, code, _, msg := openAIErr(r)
	if r.status != http.StatusGatewayTimeout || code != "outcome_unknown" ||
		!strings.Contains(msg, "resend with the same key") || strings.Contains(msg, "no Idempotency-Key") || strings.Contains(msg, "..") {
		t.Fatalf("status %d message %q", r.status, msg)
	}
}

// A provider's bad_request is the caller's fault: answered 400
// invalid_request_error with the provider's message, as OpenAI itself would
// (an SDK resends a 5xx unchanged), and saying the key is spent.
func TestChatProviderBadRequestIsTheCallers(t *testing.T) {
	const why = "Unsupported value: 'temperature' does not support 0.3 with this model."
	b := setup(t, options{respond: func(int, *providers.Request) providers.Step {
		return providers.Step{Error: &providers.Error{Kind: providers.KindBadRequest, StatusCode: 400, Message: why}}
	}})
	req := chatReq("hi")
	req.Temperature = 0.3
	_, err := b.client(acmeKey).CreateChatCompletion(context.Background(), req)
	var apiErr *openai.APIError
	if !errors.As(err, &apiErr) || apiErr.HTTPStatusCode != http.StatusBadRequest || apiErr.Type != "invalid_request_error" ||
		!strings.Contains(apiErr.Message, why) {
		t.Fatalf("provider bad_request: %v", err)
	}
	if n := len(b.primary.Requests()); n != 1 {
		t.Fatalf("the SDK sent the refused request %d times, want once", n)
	}

	r := b.do(t, http.MethodPost, chatPath, acmeKey, `{"model":"default","messages":[{"role":"user","content":"hi"}]}`,
		"Idempotency-Key", "bad-1")
	typ, _, _, msg := openAIErr(r)
	if r.status != http.StatusBadRequest || typ != "invalid_request_error" || !strings.Contains(msg, why) ||
		!strings.Contains(msg, "new Idempotency-Key") || !strings.Contains(msg, r.header.Get("X-Router-Job-Id")) {
		t.Fatalf("with a key: status %d body %s", r.status, r.raw)
	}
}

// Failing over from a provider's 503 to one that refuses the request as bad:
// the last word is the refusal, a 400.
func TestChatBadRequestAfterFailoverIsTheCallers(t *testing.T) {
	b := setup(t, options{
		respond: func(int, *providers.Request) providers.Step { return providers.Step{Status: 503} },
		fallback: func(int, *providers.Request) providers.Step {
			return providers.Step{Error: &providers.Error{Kind: providers.KindBadRequest, StatusCode: 400, Message: "seed is not supported"}}
		},
	})
	r := b.do(t, http.MethodPost, chatPath, acmeKey, `{"model":"default","messages":[{"role":"user","content":"hi"}]}`)
	typ, _, _, msg := openAIErr(r)
	if r.status != http.StatusBadRequest || typ != "invalid_request_error" || !strings.Contains(msg, "seed is not supported") ||
		strings.Contains(msg, "Idempotency-Key") {
		t.Fatalf("status %d body %s", r.status, r.raw)
	}
}

// signalOnStatement closes done once a statement whose arguments contain
// marker has run.
type signalOnStatement struct {
	marker []byte
	once   sync.Once
	done   chan struct{}
}

type markedKey struct{}

func (s *signalOnStatement) TraceQueryStart(ctx context.Context, _ *pgx.Conn, data pgx.TraceQueryStartData) context.Context {
	for _, a := range data.Args {
		if raw, ok := a.([]byte); ok && bytes.Contains(raw, s.marker) {
			return context.WithValue(ctx, markedKey{}, true)
		}
	}
	return ctx
}

func (s *signalOnStatement) TraceQueryEnd(ctx context.Context, _ *pgx.Conn, data pgx.TraceQueryEndData) {
	if ctx.Value(markedKey{}) != nil && data.Err == nil {
		s.once.Do(func() { close(s.done) })
	}
}

// A provider that refuses the request while a hedge runs on another one is
// not the last word when the other then fails for its own reasons: the other
// took the request, so the caller hears 502, not that its request is bad.
func TestChatBadRequestOvertakenByAnotherFailureIsNotTheCallers(t *testing.T) {
	refused := &signalOnStatement{marker: []byte(`"kind":"bad_request"`), done: make(chan struct{})}
	hedged, hedgedOnce := make(chan struct{}), sync.Once{}
	b := setup(t, options{
		tracer:     refused,
		hedgeAfter: time.Millisecond,
		respond: func(int, *providers.Request) providers.Step {
			<-hedged // still in flight when the hedge starts
			return providers.Step{Error: &providers.Error{Kind: providers.KindBadRequest, StatusCode: 400, Message: "prefill not supported"}}
		},
		fallback: func(int, *providers.Request) providers.Step {
			hedgedOnce.Do(func() { close(hedged) })
			<-refused.done // the primary's refusal is recorded first
			return providers.Step{Status: 503}
		},
	})
	r := b.do(t, http.MethodPost, chatPath, acmeKey, `{"model":"default","messages":[{"role":"user","content":"hi"}]}`)
	typ, code, _, _ := openAIErr(r)
	if r.status != http.StatusBadGateway || typ != "server_error" || code != "upstream_failed" {
		t.Fatalf("status %d body %s", r.status, r.raw)
	}
}
