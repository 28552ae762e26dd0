package api_test

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/routerhq/router/internal/api"
	"github.com/routerhq/router/internal/metrics"
	"github.com/routerhq/router/internal/providers"
	"github.com/routerhq/router/internal/store"
)

const streamBody = `{"model":"default","stream":true,"messages":[{"role":"user","content":"hi"}]}`

// accessLine is the access-log line of the request whose X-Request-Id is id.
func accessLine(logs *lockedBuffer, id string) string {
	var line string
	for _, l := range strings.Split(logs.String(), "\n") {
		if strings.Contains(l, "request_id="+id) && strings.Contains(l, "msg=http ") {
			line = l
		}
	}
	return line
}

// A streamed chat call whose job fails answers 200 (its headers went at once)
// and an error event, but the request failed: it is counted in
// router_http_requests_total, logged and traced with the status the error
// would have had (502 upstream_failed), not as a 200 an operator's error rate
// would never see. Found by review.
func TestFailedStreamIsCountedWithItsErrorStatus(t *testing.T) {
	exp := installTestTracing(t)
	m := metrics.New(metrics.Options{NoProcessCollectors: true})
	logs := &lockedBuffer{}
	b := setup(t, options{counters: m, logs: logs, respond: func(int, *providers.Request) providers.Step {
		return providers.Step{Status: 500}
	}})
	const rid = "failed-stream-1"
	r := b.do(t, http.MethodPost, chatPath, acmeKey, streamBody, api.RequestIDHeader, rid)
	if r.status != http.StatusOK || !strings.Contains(string(r.raw), `data: {"error":`) ||
		!strings.Contains(string(r.raw), `"code":"upstream_failed"`) || strings.Contains(string(r.raw), "[DONE]") {
		t.Fatalf("a failed stream: %d %s, want 200 and an upstream_failed error event", r.status, r.raw)
	}
	counts, _ := requestCounts(t, m)
	if n := counts["POST | POST /v1/chat/completions | 200"]; n != 0 {
		t.Errorf("the failed stream is counted as 200 (%v): %v", n, counts)
	}
	if n := counts["POST | POST /v1/chat/completions | 502"]; n != 1 {
		t.Errorf("the failed stream is counted %v times as 502, want once: %v", n, counts)
	}
	if line := accessLine(logs, rid); !strings.Contains(line, "status=502") || !strings.Contains(line, "wire_status=200") {
		t.Errorf("access-log line %q, want status=502 wire_status=200", line)
	}
	found := false
	for _, s := range exp.GetSpans() {
		if s.SpanKind != trace.SpanKindServer || attrs(s)["router.request.id"] != attribute.StringValue(rid) {
			continue
		}
		found = true
		a := attrs(s)
		if s.Status.Code != codes.Error || a["http.response.status_code"] != attribute.IntValue(200) ||
			a["router.stream.error_status"] != attribute.IntValue(502) {
			t.Errorf("span status %v, attributes %v: want an error, the wire's 200 and the stream's 502", s.Status, a)
		}
	}
	if !found {
		t.Error("no server span for the request")
	}

	// A streamed success is still a 200.
	ok := setup(t, options{counters: metrics.New(metrics.Options{NoProcessCollectors: true})})
	if r := ok.do(t, http.MethodPost, chatPath, acmeKey, streamBody); r.status != http.StatusOK || !strings.Contains(string(r.raw), "[DONE]") {
		t.Fatalf("a streamed success: %d %s", r.status, r.raw)
	}
}

// A streaming caller that leaves while its job runs is counted with the 200
// its headers already sent, as nginx counts it (docs/operations.md): no
// error event was answered, so no error status is recorded.
func TestStreamWhoseCallerLeftKeepsItsStatus(t *testing.T) {
	m := metrics.New(metrics.Options{NoProcessCollectors: true})
	called := make(chan struct{}, 1)
	release := make(chan struct{})
	defer close(release)
	b := setup(t, options{counters: m, respond: func(int, *providers.Request) providers.Step {
		select {
		case called <- struct{}{}:
		default:
		}
		<-release
		return providers.Step{Status: 500}
	}})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, b.srv.URL+chatPath, strings.NewReader(streamBody))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+acmeKey)
	req.Header.Set("Idempotency-Key", "stream-leaves-1")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d", resp.StatusCode)
	}
	<-called
	cancel() // the caller hangs up mid-stream
	resp.Body.Close()
	b.srv.Close() // returns once every request has been served
	counts, _ := requestCounts(t, m)
	if n := counts["POST | POST /v1/chat/completions | 200"]; n != 1 {
		t.Errorf("a stream whose caller left is counted %v times as 200, want once: %v", n, counts)
	}
}

// A streamed replay of a job already settled without success (failed,
// outcome unknown) knows its answer before any byte: it answers with the
// error's own status and headers, as the plain call with the same key does,
// not a 200 stream holding only an error event. Found by review.
func TestStreamedReplayOfSettledFailureAnswersItsStatus(t *testing.T) {
	for _, tc := range []struct {
		name   string
		opt    options
		status int
		code   string
	}{
		{"failed", options{respond: func(int, *providers.Request) providers.Step { return providers.Step{Status: 500} }},
			http.StatusBadGateway, "upstream_failed"},
		{"outcome unknown", options{timeout: 50 * time.Millisecond, respond: func(int, *providers.Request) providers.Step {
			return providers.Step{Hang: true}
		}}, http.StatusGatewayTimeout, "outcome_unknown"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := setup(t, tc.opt)
			key := "replay-settled-" + strings.ReplaceAll(tc.name, " ", "-")
			plain := b.do(t, http.MethodPost, chatPath, acmeKey, `{"model":"default","messages":[{"role":"user","content":"hi"}]}`, "Idempotency-Key", key)
			if plain.status != tc.status || plain.header.Get("X-Should-Retry") != "false" {
				t.Fatalf("plain call: %d (x-should-retry %q) %s", plain.status, plain.header.Get("X-Should-Retry"), plain.raw)
			}
			streamed := b.do(t, http.MethodPost, chatPath, acmeKey, streamBody, "Idempotency-Key", key)
			e, _ := streamed.body["error"].(map[string]any)
			if streamed.status != plain.status || streamed.header.Get("X-Should-Retry") != "false" ||
				streamed.header.Get("Idempotent-Replayed") != "true" || e["code"] != tc.code ||
				strings.HasPrefix(streamed.header.Get("Content-Type"), "text/event-stream") {
				t.Fatalf("streamed replay: %d %v %s, want the plain call's %d with its error body", streamed.status, streamed.header, streamed.raw, plain.status)
			}
		})
	}
}

// A 503 no_eligible_provider says when to come back: Retry-After, the
// seconds until the route's first open breaker probes again, between 1 and
// 60. Found by review.
func TestNoEligibleProviderHasRetryAfter(t *testing.T) {
	for _, tc := range []struct {
		name     string
		openFor  time.Duration
		min, max int
	}{
		{"breaker open for 45s", 45 * time.Second, 1, 45},
		{"breaker open for 10m", 10 * time.Minute, 60, 60},
	} {
		t.Run(tc.name, func(t *testing.T) {
			set := openPrimaryBreaker(t, tc.openFor)
			b := setup(t, options{admission: set})
			r := b.do(t, http.MethodPost, chatPath, acmeKey, `{"model":"default","messages":[{"role":"user","content":"hi"}]}`)
			e, _ := r.body["error"].(map[string]any)
			if r.status != http.StatusServiceUnavailable || e["code"] != "no_eligible_provider" {
				t.Fatalf("%d %s, want 503 no_eligible_provider", r.status, r.raw)
			}
			n, err := strconv.Atoi(r.header.Get("Retry-After"))
			if err != nil || n < tc.min || n > tc.max {
				t.Fatalf("Retry-After %q, want seconds in [%d, %d]", r.header.Get("Retry-After"), tc.min, tc.max)
			}
		})
	}
}

// A chat job has no prompt: an answer that misses the request's
// response_format is said to, not to break "the prompt's contract". A prompt
// job's still breaks its prompt's contract. Found by review.
func TestInvalidAnswerNotesNameWhatWasBroken(t *testing.T) {
	for _, tc := range []struct {
		name, extra, want string
		step              providers.Step
	}{
		{"json_schema", `,"response_format":{"type":"json_schema","json_schema":{"name":"a","schema":{"type":"object","properties":{"answer":{"type":"string"}},"required":["answer"]}}}}`,
			"primary: the answer does not match the request's response_format.json_schema (", providers.Step{Output: `{"answer": 42}`}},
		{"json_object", `,"response_format":{"type":"json_object"}}`,
			"primary: the answer is not the JSON object the request's response_format asks for (", providers.Step{Output: `not json`}},
		{"tool calls not offered", `}`, "primary: the answer cannot be used (tool_calls at $.tool_calls: ",
			providers.Step{ToolCalls: `[{"type":"function","id":"call_1","function":{"name":"f","arguments":"{}"}}]`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := setup(t, options{respond: func(int, *providers.Request) providers.Step { return tc.step }})
			r := b.do(t, http.MethodPost, chatPath, acmeKey, `{"model":"default","messages":[{"role":"user","content":"hi, in JSON"}]`+tc.extra)
			e, _ := r.body["error"].(map[string]any)
			msg, _ := e["message"].(string)
			if r.status != http.StatusBadGateway || !strings.Contains(msg, tc.want) || strings.Contains(msg, "prompt") {
				t.Fatalf("%d %s, want 502 saying %q", r.status, r.raw, tc.want)
			}
		})
	}
	b := setup(t, options{respond: func(int, *providers.Request) providers.Step { return providers.Step{Output: `{"category":"nope"}`} }})
	r := b.create(t, acmeKey, "invalid-note-1", triageBody("invalid"), "Prefer", "wait=30")
	if msg, _ := r.body["error"].(string); r.body["state"] != store.JobFailed || !strings.Contains(msg, "primary: output breaks the prompt's contract (") {
		t.Fatalf("prompt job: %d %s, want failed, breaking the prompt's contract", r.status, r.raw)
	}
}

// A body over the limit names the setting that raises it. Found by review.
func TestBodyTooLargeNamesTheSetting(t *testing.T) {
	b := setup(t, options{maxBody: 1024})
	big := strings.Repeat("x", 2048)
	chat := b.do(t, http.MethodPost, chatPath, acmeKey, `{"model":"default","messages":[{"role":"user","content":"`+big+`"}]}`)
	e, _ := chat.body["error"].(map[string]any)
	if msg, _ := e["message"].(string); chat.status != http.StatusRequestEntityTooLarge || !strings.Contains(msg, "http.max_body_bytes") {
		t.Fatalf("chat: %d %s", chat.status, chat.raw)
	}
	job := b.create(t, acmeKey, "too-large-1", triageBody(big))
	if detail, _ := job.body["detail"].(string); job.status != http.StatusRequestEntityTooLarge || !strings.Contains(detail, "http.max_body_bytes") {
		t.Fatalf("jobs: %d %s", job.status, job.raw)
	}
}

// panickingExecutor panics when it is handed a new job: in a streamed chat
// call, that is in the goroutine that waits for the job, out of reach of
// ServeHTTP's recovery.
type panickingExecutor struct{ api.Executor }

func (panickingExecutor) SubmitNew(*store.Job, store.JobPlan) { panic("injected by the test") }

// A panic while a stream waits for its job does not end the process: the
// stream ends with an internal error event (no [DONE]), and the request is
// counted as a 500. Found by review.
func TestPanicWhileAStreamWaitsIsAnInternalErrorEvent(t *testing.T) {
	m := metrics.New(metrics.Options{NoProcessCollectors: true})
	b := setup(t, options{counters: m, exec: func(e api.Executor) api.Executor { return panickingExecutor{e} }})
	r := b.do(t, http.MethodPost, chatPath, acmeKey, streamBody)
	raw := string(r.raw)
	if r.status != http.StatusOK || !strings.Contains(raw, `data: {"error":`) || !strings.Contains(raw, `"code":"internal"`) || strings.Contains(raw, "[DONE]") {
		t.Fatalf("%d %s, want an internal error event and no [DONE]", r.status, raw)
	}
	counts, _ := requestCounts(t, m)
	if n := counts["POST | POST /v1/chat/completions | 500"]; n != 1 {
		t.Errorf("counted %v times as 500, want once: %v", n, counts)
	}
}
