package providers

import (
	"context"
	"errors"
	"net"
	"net/http"
	"testing"
	"time"
)

func TestOpenAIHTTPErrors(t *testing.T) {
	type row struct {
		name       string
		status     int
		header     map[string]string
		body       string
		kind       Kind
		fault      Fault
		action     Action
		code       string
		retryAfter time.Duration
	}
	rows := []row{
		{name: "400 context length", status: 400,
			body: apiErrorBody("This model's maximum context length is 8192 tokens. However, your messages resulted in 9000 tokens. Please reduce the length of the messages.", "invalid_request_error", "messages", "context_length_exceeded"),
			kind: KindContextLength, fault: FaultCaller, action: ActionFailover, code: "context_length_exceeded"},
		{name: "400 content policy", status: 400,
			body: apiErrorBody("Your request was rejected as a result of our safety system. Your prompt may contain text that is not allowed by our safety system.", "invalid_request_error", nil, "content_policy_violation"),
			kind: KindContentPolicy, fault: FaultCaller, action: ActionStop, code: "content_policy_violation"},
		{name: "400 azure content filter", status: 400,
			body: `{"error":{"message":"The response was filtered due to the prompt triggering Azure OpenAI's content management policy.","type":null,"param":"prompt","code":"content_filter","status":400,"innererror":{"code":"ResponsibleAIPolicyViolation","content_filter_result":{"hate":{"filtered":true,"severity":"high"}}}}}`,
			kind: KindContentPolicy, fault: FaultCaller, action: ActionStop, code: "ResponsibleAIPolicyViolation"},
		{name: "400 content policy by message", status: 400,
			body: apiErrorBody("This request violates our content policy.", "invalid_request_error", nil, nil),
			kind: KindContentPolicy, fault: FaultCaller, action: ActionStop, code: "invalid_request_error"},
		{name: "400 bad request", status: 400,
			body: apiErrorBody("Invalid value for 'temperature': must be between 0 and 2.", "invalid_request_error", "temperature", "invalid_value"),
			kind: KindBadRequest, fault: FaultCaller, action: ActionStop, code: "invalid_value"},
		// Gemini's OpenAI-compatible API refuses a bad key with 400
		// INVALID_ARGUMENT; Anthropic's an account out of credit with 400:
		// the router's own problems, not the caller's bad request (found by
		// review: they stopped the job and never counted against the breaker).
		{name: "400 key not valid", status: 400,
			body: apiErrorBody("API key not valid. Please pass a valid API key.", "INVALID_ARGUMENT", nil, 400),
			kind: KindAuth, fault: FaultRouter, action: ActionFailover, code: "400"},
		{name: "400 credit balance", status: 400,
			body: apiErrorBody("Your credit balance is too low to access the Anthropic API. Please go to Plans & Billing to upgrade or purchase credits.", "invalid_request_error", nil, nil),
			kind: KindQuotaExceeded, fault: FaultRouter, action: ActionFailover, code: "invalid_request_error"},
		{name: "422 unprocessable", status: 422,
			body: apiErrorBody("messages: field required", "BadRequestError", nil, 422),
			kind: KindBadRequest, fault: FaultCaller, action: ActionStop, code: "422"},
		{name: "401 auth", status: 401,
			body: apiErrorBody("Incorrect API key provided: sk-test. You can find your API key at https://platform.openai.com/account/api-keys.", "invalid_request_error", nil, "invalid_api_key"),
			kind: KindAuth, fault: FaultRouter, action: ActionFailover, code: "invalid_api_key"},
		{name: "403 forbidden", status: 403,
			body: apiErrorBody("Project does not have access to model gpt-test", "invalid_request_error", nil, "model_not_found"),
			kind: KindAuth, fault: FaultRouter, action: ActionFailover, code: "model_not_found"},
		{name: "404 model", status: 404,
			body: apiErrorBody("The model `gpt-test` does not exist or you do not have access to it.", "invalid_request_error", nil, "model_not_found"),
			kind: KindModelNotFound, fault: FaultRouter, action: ActionFailover, code: "model_not_found"},
		{name: "408 request timeout", status: 408,
			body: apiErrorBody("Request timed out.", "timeout", nil, nil),
			kind: KindRequestTimeout, fault: FaultProvider, action: ActionFailover, code: "timeout"},
		{name: "409 conflict", status: 409,
			body: apiErrorBody("The request conflicted with another request.", "conflict", nil, nil),
			kind: KindConflict, fault: FaultProvider, action: ActionFailover, code: "conflict"},
		{name: "429 without Retry-After", status: 429,
			body: apiErrorBody("Rate limit reached for gpt-test in organization org-x on requests per min (RPM): Limit 3, Used 3, Requested 1.", "requests", "null", "rate_limit_exceeded"),
			kind: KindRateLimited, fault: FaultProvider, action: ActionRetry, code: "rate_limit_exceeded"},
		{name: "429 Retry-After seconds", status: 429, header: map[string]string{"Retry-After": "7"},
			body: apiErrorBody("Rate limit reached.", "tokens", nil, "rate_limit_exceeded"),
			kind: KindRateLimited, fault: FaultProvider, action: ActionRetry, code: "rate_limit_exceeded", retryAfter: 7 * time.Second},
		{name: "429 retry-after-ms", status: 429, header: map[string]string{"Retry-After": "2", "retry-after-ms": "1500"},
			body: apiErrorBody("Rate limit reached.", "tokens", nil, "rate_limit_exceeded"),
			kind: KindRateLimited, fault: FaultProvider, action: ActionRetry, code: "rate_limit_exceeded", retryAfter: 1500 * time.Millisecond},
		{name: "429 insufficient quota", status: 429,
			body: apiErrorBody("You exceeded your current quota, please check your plan and billing details.", "insufficient_quota", nil, "insufficient_quota"),
			kind: KindQuotaExceeded, fault: FaultRouter, action: ActionFailover, code: "insufficient_quota"},
		{name: "500 plain text", status: 500, body: "Internal Server Error",
			kind: KindServerError, fault: FaultProvider, action: ActionRetry},
		{name: "500 json", status: 500,
			body: apiErrorBody("The server had an error while processing your request. Sorry about that!", "server_error", nil, nil),
			kind: KindServerError, fault: FaultProvider, action: ActionRetry, code: "server_error"},
		{name: "502 html", status: 502, body: "<html><body><h1>502 Bad Gateway</h1></body></html>",
			kind: KindServerError, fault: FaultProvider, action: ActionRetry},
		{name: "503 Retry-After", status: 503, header: map[string]string{"Retry-After": "30"},
			body: apiErrorBody("The engine is currently overloaded, please try again later.", "server_error", nil, nil),
			kind: KindUnavailable, fault: FaultProvider, action: ActionRetry, code: "server_error", retryAfter: 30 * time.Second},
		{name: "504 gateway timeout", status: 504, body: "upstream request timeout",
			kind: KindGatewayTimeout, fault: FaultProvider, action: ActionRetry},
	}
	for _, r := range rows {
		for _, stream := range []bool{false, true} {
			name := r.name
			if stream {
				name += "/stream"
			}
			t.Run(name, func(t *testing.T) {
				srv := newFakeServer(t, func(w http.ResponseWriter, _ *http.Request) {
					writeError(w, r.status, r.header, r.body)
				})
				p := newTestAdapter(t, srv.URL, func(c *OpenAIConfig) { c.Stream = stream })
				_, err := p.Complete(context.Background(), testRequest())
				e := mustError(t, err)
				if e.Kind != r.kind || e.Fault != r.fault || e.Action != r.action {
					t.Fatalf("got %s/%s/%s, want %s/%s/%s (%v)", e.Kind, e.Fault, e.Action, r.kind, r.fault, r.action, e)
				}
				if e.StatusCode != r.status || e.Code != r.code || e.RetryAfter != r.retryAfter {
					t.Fatalf("got status %d code %q retryAfter %v, want %d %q %v", e.StatusCode, e.Code, e.RetryAfter, r.status, r.code, r.retryAfter)
				}
				if e.OutcomeUnknown || e.Provider != "fake" || e.Err == nil || e.Message == "" {
					t.Fatalf("unexpected error fields: %+v", e)
				}
			})
		}
	}
}

func mustError(t *testing.T, err error) *Error {
	t.Helper()
	if err == nil {
		t.Fatal("expected an error")
	}
	e, ok := AsError(err)
	if !ok {
		t.Fatalf("error %T is not an *Error: %v", err, err)
	}
	return e
}

func assertKind(t *testing.T, err error, kind Kind, fault Fault, action Action, unknown bool) *Error {
	t.Helper()
	e := mustError(t, err)
	if e.Kind != kind || e.Fault != fault || e.Action != action || e.OutcomeUnknown != unknown {
		t.Fatalf("got %s/%s/%s unknown=%v, want %s/%s/%s unknown=%v (%v; cause %v)",
			e.Kind, e.Fault, e.Action, e.OutcomeUnknown, kind, fault, action, unknown, e, e.Err)
	}
	return e
}

func TestOpenAITransportErrors(t *testing.T) {
	for _, stream := range []bool{false, true} {
		mode := "/complete"
		if stream {
			mode = "/stream"
		}
		withStream := func(c *OpenAIConfig) { c.Stream = stream }

		t.Run("connection refused"+mode, func(t *testing.T) {
			p := newTestAdapter(t, "http://"+closedAddr(t)+"/v1", withStream)
			_, err := p.Complete(context.Background(), testRequest())
			assertKind(t, err, KindConnRefused, FaultNetwork, ActionRetry, false)
		})

		t.Run("closed before headers"+mode, func(t *testing.T) {
			srv := newFakeServer(t, func(w http.ResponseWriter, _ *http.Request) {
				conn, _, err := http.NewResponseController(w).Hijack()
				if err == nil {
					conn.Close()
				}
			})
			p := newTestAdapter(t, srv.URL, withStream)
			_, err := p.Complete(context.Background(), testRequest())
			assertKind(t, err, KindConnReset, FaultNetwork, ActionRetry, false)
		})

		t.Run("reset before headers"+mode, func(t *testing.T) {
			srv := newFakeServer(t, func(w http.ResponseWriter, _ *http.Request) {
				conn, _, err := http.NewResponseController(w).Hijack()
				if err != nil {
					return
				}
				if tc, ok := conn.(*net.TCPConn); ok {
					tc.SetLinger(0) // close with RST
				}
				conn.Close()
			})
			p := newTestAdapter(t, srv.URL, withStream)
			_, err := p.Complete(context.Background(), testRequest())
			assertKind(t, err, KindConnReset, FaultNetwork, ActionRetry, false)
		})

		t.Run("timeout before headers"+mode, func(t *testing.T) {
			srv := newFakeServer(t, nil)
			release := releaseAtCleanup(t)
			srv.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				select {
				case <-release:
				case <-r.Context().Done():
				}
			})
			// The timeout passes once the request was sent (totalEndsOnceSent),
			// not after a wait a loaded machine may spend connecting.
			p := newTestAdapter(t, srv.URL, func(c *OpenAIConfig) { c.Stream = stream; c.Timeout = 2 * time.Hour })
			_, err := p.Complete(totalEndsOnceSent(t, context.Background()), testRequest())
			e := assertKind(t, err, KindTimeout, FaultNetwork, ActionFailover, true)
			if !errors.Is(e, context.DeadlineExceeded) {
				t.Fatalf("cause should be the deadline: %v", e.Err)
			}
		})

		t.Run("timeout before any connection"+mode, func(t *testing.T) {
			hc := &http.Client{Transport: &http.Transport{
				DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
					<-ctx.Done()
					return nil, ctx.Err()
				},
			}}
			p := newTestAdapter(t, "http://never.invalid/v1", func(c *OpenAIConfig) {
				c.Stream = stream
				c.Timeout = 20 * time.Millisecond
				c.HTTPClient = hc
			})
			_, err := p.Complete(context.Background(), testRequest())
			assertKind(t, err, KindTimeout, FaultNetwork, ActionFailover, false)
		})

		t.Run("cancelled by caller"+mode, func(t *testing.T) {
			reached := make(chan struct{})
			srv := newFakeServer(t, nil)
			release := releaseAtCleanup(t)
			srv.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				close(reached)
				select {
				case <-release:
				case <-r.Context().Done():
				}
			})
			p := newTestAdapter(t, srv.URL, withStream)
			ctx, cancel := context.WithCancel(context.Background())
			go func() { <-reached; cancel() }()
			_, err := p.Complete(ctx, testRequest())
			assertKind(t, err, KindCancelled, FaultRouter, ActionStop, false)
		})
	}
}
