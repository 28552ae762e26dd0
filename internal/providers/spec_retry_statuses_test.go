package providers

import (
	"context"
	"net/http"
	"strconv"
	"testing"
)

// SPEC §6.2 retries the same provider only for 429, 5xx and a reset before
// any response byte. HTTP 408 (OpenRouter's "Your request timed out": the
// upstream model ran out of time, and may have done and billed the work) and
// 409 are the provider's fault but fail over, in every form the adapters see
// them (found by review: both were retried on the same provider).
func TestRequestTimeoutAndConflictFailOver(t *testing.T) {
	check := func(what string, e *Error, kind Kind) {
		t.Helper()
		if e.Kind != kind || e.Fault != FaultProvider || e.Action != ActionFailover {
			t.Errorf("%s is %s/%s/%s, want %s/provider/failover: SPEC §6.2 retries the same provider only for 429, 5xx and resets",
				what, e.Kind, e.Fault, e.Action, kind)
		}
	}
	check("HTTP 408", ClassifyStatus("p", 408, "", "Your request timed out"), KindRequestTimeout)
	check("HTTP 409", ClassifyStatus("p", 409, "", "conflict"), KindConflict)
	check("Anthropic 409 conflict_error", classifyAnthropicAPI("p", 409, "conflict_error", "", "conflict", nil), KindConflict)
	for _, status := range []int{408, 409} {
		kind := map[int]Kind{408: KindRequestTimeout, 409: KindConflict}[status]
		for _, stream := range []bool{false, true} {
			srv := newFakeServer(t, func(w http.ResponseWriter, _ *http.Request) {
				writeError(w, status, nil, `{"error":{"code":`+strconv.Itoa(status)+`,"message":"Your request timed out"}}`)
			})
			p := newTestAdapter(t, srv.URL, func(c *OpenAIConfig) { c.Stream = stream })
			_, err := p.Complete(context.Background(), testRequest())
			check("HTTP "+strconv.Itoa(status)+" through the adapter (stream="+strconv.FormatBool(stream)+")", mustError(t, err), kind)
		}
	}
	// OpenRouter's error event inside a 200 stream naming 408.
	srv := newFakeServer(t, func(w http.ResponseWriter, _ *http.Request) {
		startStream(w)
		sse(w, `{"error":{"code":408,"message":"Your request timed out"}}`)
	})
	p := newTestAdapter(t, srv.URL, func(c *OpenAIConfig) { c.Stream = true })
	_, err := p.Complete(context.Background(), testRequest())
	check("an in-stream error with code 408", mustError(t, err), KindRequestTimeout)
}
