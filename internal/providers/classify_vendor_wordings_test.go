package providers

import (
	"context"
	"net/http"
	"strings"
	"testing"
)

// DeepSeek's moderation refuses a prompt with 400 "Content Exists Risk"
// (type and code invalid_request_error): a content-policy refusal, which a
// route with failover_on_content_policy sends to another target. It was a
// plain bad_request, which stops the job whatever the route says.
func TestDeepSeekContentExistsRiskIsContentPolicy(t *testing.T) {
	srv := newFakeServer(t, func(w http.ResponseWriter, _ *http.Request) {
		writeError(w, http.StatusBadRequest, nil,
			`{"error":{"message":"Content Exists Risk","type":"invalid_request_error","param":null,"code":"invalid_request_error"}}`)
	})
	_, err := newTestAdapter(t, srv.URL, nil).Complete(context.Background(), testRequest())
	e, ok := AsError(err)
	if !ok {
		t.Fatalf("error %v is no *Error", err)
	}
	if e.Kind != KindContentPolicy {
		t.Fatalf("DeepSeek's moderation refusal: kind %s (action %s), want %s", e.Kind, e.Action, KindContentPolicy)
	}
}

// TGI (Hugging Face Inference Endpoints, and servers built on its router:
// LoRAX) answers a failed generation — CUDA out of memory, a shard that
// died — with HTTP 424 Failed Dependency and error_type "generation": the
// server's own transient failure, a server_error (as the same error_type in
// a stream already is), retried. It was misconfigured: not retried, and its
// message sent the operator to check the target's base_url.
func TestTGIGenerationError424IsServerError(t *testing.T) {
	srv := newFakeServer(t, func(w http.ResponseWriter, _ *http.Request) {
		writeError(w, http.StatusFailedDependency, nil,
			`{"error":"Request failed during generation: Server error: CUDA out of memory. Tried to allocate 2.00 GiB","error_type":"generation"}`)
	})
	_, err := newTestAdapter(t, srv.URL, nil).Complete(context.Background(), testRequest())
	e, ok := AsError(err)
	if !ok {
		t.Fatalf("error %v is no *Error", err)
	}
	if e.Kind != KindServerError || e.Action != ActionRetry {
		t.Fatalf("TGI's 424 generation error: kind %s action %s, want %s %s (message: %q)", e.Kind, e.Action, KindServerError, ActionRetry, e.Message)
	}
	if strings.Contains(e.Message, "base_url") {
		t.Fatalf("message blames the target's base_url for a failed generation: %q", e.Message)
	}
}

// xAI answers an account out of credits, or past its monthly spending limit,
// with 429 "Your team … has either used all available credits or reached its
// monthly spending limit": the router's account's quota, which no wait
// passes — quota_exceeded, failed over at once, the operator told to check
// billing. It was rate_limited: retried on the same target max_retries
// times, each refused again, and the operator told of a rate limit.
func TestXAICreditsExhausted429IsQuota(t *testing.T) {
	srv := newFakeServer(t, func(w http.ResponseWriter, _ *http.Request) {
		writeError(w, http.StatusTooManyRequests, nil,
			`{"code":"Some resource has been exhausted","error":"Your team 16f2151a-40f4-4a80-8ad0-cae00c27e8dd has either used all available credits or reached its monthly spending limit. To continue making API requests, please purchase more credits or raise your spending limit."}`)
	})
	_, err := newTestAdapter(t, srv.URL, nil).Complete(context.Background(), testRequest())
	e, ok := AsError(err)
	if !ok {
		t.Fatalf("error %v is no *Error", err)
	}
	if e.Kind != KindQuotaExceeded || e.Action != ActionFailover {
		t.Fatalf("xAI's credits exhausted: kind %s action %s, want %s %s", e.Kind, e.Action, KindQuotaExceeded, ActionFailover)
	}
}
